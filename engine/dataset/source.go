package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one line of a text or JSONL file: generous for long-context
// prompts, yet a file without newlines cannot eat all memory.
const maxLine = 256 << 20

// source is an open data file, transparently gunzipped.
type source struct {
	f *os.File
	r io.Reader
}

// openSource opens path and, when its first bytes are gzip's magic (1f 8b)
// whatever its name, decompresses it. A UTF-8 byte order mark, which
// spreadsheet exports add, is dropped so it does not glue to the first
// prompt or column name.
func openSource(path string) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	br := bufio.NewReaderSize(f, 1<<16)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		r = bufio.NewReaderSize(gz, 1<<16)
	}
	s := &source{f: f, r: r}
	if err := s.skipBOM(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: reading: %w", path, err)
	}
	return s, nil
}

func (s *source) skipBOM() error {
	br, ok := s.r.(*bufio.Reader)
	if !ok {
		return nil
	}
	b, err := br.Peek(3)
	if err != nil && err != io.EOF {
		return err
	}
	if bytes.Equal(b, []byte{0xef, 0xbb, 0xbf}) {
		_, err := br.Discard(3)
		return err
	}
	return nil
}

// Close closes the file.
func (s *source) Close() error { return s.f.Close() }

// eachLine calls fn with every line of path (numbered from 1, without its
// line ending). The slice is reused: fn must copy what it keeps.
func eachLine(path string, fn func(line int, b []byte) error) error {
	s, err := openSource(path)
	if err != nil {
		return err
	}
	defer s.Close()
	sc := bufio.NewScanner(s.r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, bytes.TrimSuffix(sc.Bytes(), []byte{'\r'})); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("%s:%d: line longer than %d MB", path, n+1, maxLine>>20)
		}
		return fmt.Errorf("%s:%d: reading: %w", path, n+1, err)
	}
	return nil
}

// lineAt returns the line number of byte offset off of path's (decompressed)
// content. It rereads the file, which is fine on the error path only.
func lineAt(path string, off int64) int {
	s, err := openSource(path)
	if err != nil {
		return 0
	}
	defer s.Close()
	line := 1
	buf := make([]byte, 1<<16)
	for off > 0 {
		n, err := s.r.Read(buf[:min(int64(len(buf)), off)])
		line += bytes.Count(buf[:n], []byte{'\n'})
		off -= int64(n)
		if err != nil {
			break
		}
	}
	return line
}

// unwrapPathError drops *os.PathError's repetition of the path, which the
// caller puts first anyway.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
