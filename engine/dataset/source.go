package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxLineBytes bounds one line of a text, JSONL or CSV file and one record
// of a ShareGPT file: generous for long-context prompts (16 MB is about
// 4M tokens), yet a file without newlines fails fast instead of filling
// memory.
const MaxLineBytes = 16 << 20

// MaxFileBytes bounds a data file's content after decompression, so a
// gzip bomb cannot take the process down.
const MaxFileBytes = 2 << 30

// source is an open data file, transparently gunzipped, whose content is
// checked as it is read (see guard).
type source struct {
	f *os.File
	r *bufio.Reader
	g *guard
}

// openSource opens path and, when its first bytes are gzip's magic (1f 8b)
// whatever its name, decompresses it; a name ending in .gz over bytes that
// are not gzip is an error, as it is most likely a truncated download or a
// mislabelled file. A UTF-8 byte order mark, which spreadsheet exports add,
// is dropped so it does not glue to the first prompt or column name.
// Reads fail once ctx is done, and with lim's limits.
func openSource(ctx context.Context, path string, lim limits) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	r, err := decompressed(path, bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := skipBOM(r); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: reading: %w", path, err)
	}
	g := newGuard(ctx, path, r, lim)
	return &source{f: f, r: bufio.NewReaderSize(g, 1<<16), g: g}, nil
}

// decompressed returns br itself, or a reader of its gunzipped content
// when it starts with gzip's magic.
func decompressed(path string, br *bufio.Reader) (*bufio.Reader, error) {
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if strings.HasSuffix(strings.ToLower(path), ".gz") && len(magic) > 0 {
			return nil, fmt.Errorf("%s: named .gz but not gzip data (it does not start with 1f 8b); rename it without .gz, or compress it", path)
		}
		return br, nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: gzip: %w", path, err)
	}
	return bufio.NewReaderSize(gz, 1<<16), nil
}

func skipBOM(br *bufio.Reader) error {
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

// textLimits are the limits of line-oriented files.
var textLimits = limits{maxLine: MaxLineBytes, maxTotal: MaxFileBytes}

// eachLine calls fn with every line of path (numbered from 1, without its
// line ending). The slice is reused: fn must copy what it keeps.
func eachLine(ctx context.Context, path string, fn func(line int, b []byte) error) error {
	s, err := openSource(ctx, path, textLimits)
	if err != nil {
		return err
	}
	defer s.Close()
	err = scanLines(s.r, fn)
	if err != nil && !isSourceError(err) {
		return fmt.Errorf("%s:%d: reading: %w", path, s.g.line, err)
	}
	return err
}

// scanLines calls fn with every line of r. It reads with ReadSlice, so
// each byte is looked at once however long the line: bufio.Scanner
// rescans a growing buffer from its start after every read, which is
// quadratic in the length of a line. r's reader bounds a line's length.
func scanLines(r *bufio.Reader, fn func(line int, b []byte) error) error {
	var long []byte // a line longer than r's buffer, joined from fragments
	for n := 1; ; n++ {
		b, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = r.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF && len(b) == 0 {
			return nil
		}
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\r'})
		if ferr := fn(n, b); ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// lineAt returns the line number of byte offset off of path's (decompressed)
// content. It rereads the file, which is fine on the error path only.
func lineAt(path string, off int64) int {
	s, err := openSource(context.Background(), path, limits{})
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

// isSourceError reports whether err already names the file and line.
func isSourceError(err error) bool {
	var se *sourceError
	return errors.As(err, &se)
}
