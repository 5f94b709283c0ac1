package dataset

import (
	"context"
	"fmt"
	"io"
	"unicode/utf8"
)

// limits bound what a guard lets through; a zero field means no limit.
type limits struct {
	maxLine  int   // bytes in one line, its line ending excluded
	maxTotal int64 // bytes of (decompressed) content
	// maxRecord bounds the bytes read since the reader was last told a
	// record ended (guard.recordEnded), for formats whose records are not
	// lines.
	maxRecord int
}

// sourceError is a failure at a line of a data file; its message starts
// with "path:line:", as every loader error does.
type sourceError struct {
	path string
	line int
	err  error
}

func (e *sourceError) Error() string { return fmt.Sprintf("%s:%d: %v", e.path, e.line, e.err) }
func (e *sourceError) Unwrap() error { return e.err }

// guard passes a data file's content through while checking every byte
// once, in one pass, so the checks cost linear time whatever the shape of
// the file: it refuses binary content (a NUL byte, invalid UTF-8, a line
// that is mostly control characters), lines and files beyond its limits,
// and stops once ctx is done. It counts lines, so its errors name the
// line at fault. Every format's loader reads through one, so text, JSONL,
// CSV and ShareGPT files, plain or gzipped, get the same checks.
type guard struct {
	ctx  context.Context
	path string
	r    io.Reader
	lim  limits

	line     int   // current line, from 1
	lineLen  int   // bytes of the current line so far
	lineCtrl int   // control characters in the current line so far
	total    int64 // bytes so far
	partial  []byte
	recStart int64 // where the current record started, for lim.maxRecord
	err      error // sticky: once refused, every later Read fails the same way
}

func newGuard(ctx context.Context, path string, r io.Reader, lim limits) *guard {
	return &guard{ctx: ctx, path: path, r: r, lim: lim, line: 1}
}

// Read reads from the underlying reader and checks what it got. A read
// with a bad byte returns none of its bytes, so the reader above never
// parses what the guard refused; a line's end (and the file's) is withheld
// until the line has passed the checks made there.
func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := g.ctx.Err(); err != nil {
		g.err = g.fail(fmt.Errorf("loading interrupted after %d MB: %w", g.total>>20, context.Cause(g.ctx)))
		return 0, g.err
	}
	n, err := g.r.Read(p)
	if cerr := g.check(p[:n]); cerr != nil {
		g.err = cerr
		return 0, cerr
	}
	if err == io.EOF {
		if cerr := g.finish(); cerr != nil {
			g.err = cerr
			return 0, cerr
		}
	}
	return n, err
}

// readAhead is what the readers between the guard and a decoder may hold
// beyond the record it decodes.
const readAhead = 1 << 20

// recordEnded notes that a record ended at offset off of the content.
func (g *guard) recordEnded(off int64) { g.recStart = off }

func (g *guard) fail(err error) error { return &sourceError{path: g.path, line: g.line, err: err} }

// check looks at each byte of b once. A line's length is checked at its
// end and at the end of each read, which finds an overlong line within one
// read of its limit.
func (g *guard) check(b []byte) error {
	g.total += int64(len(b))
	if g.lim.maxTotal > 0 && g.total > g.lim.maxTotal {
		return g.fail(fmt.Errorf("more than %d MB of content (decompressed); llmload keeps pools in memory", g.lim.maxTotal>>20))
	}
	if g.lim.maxRecord > 0 && g.total-g.recStart > int64(g.lim.maxRecord)+readAhead {
		return g.fail(fmt.Errorf("record longer than %d MB", g.lim.maxRecord>>20))
	}
	if len(g.partial) > 0 {
		var err error
		if b, err = g.completeRune(b); err != nil {
			return err
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x20 && c < 0x7f { // the common case, kept inline
			g.lineLen++
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if err := g.ascii(c); err != nil {
				return err
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			g.partial = append(g.partial[:0], b[i:]...)
			break
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return g.fail(binaryData(fmt.Sprintf("invalid UTF-8 byte 0x%02x at column %d", c, g.lineLen+1)))
		}
		g.lineLen += size
		i += size
	}
	return g.checkLen()
}

// completeRune finishes the multi-byte character that the previous read
// cut, and returns the rest of b.
func (g *guard) completeRune(b []byte) ([]byte, error) {
	for len(b) > 0 && !utf8.FullRune(g.partial) {
		g.partial, b = append(g.partial, b[0]), b[1:]
	}
	if !utf8.FullRune(g.partial) {
		return b, nil // still cut: wait for more
	}
	// FullRune is true as soon as the bytes are known to be invalid, so a
	// valid character takes all of partial.
	if r, size := utf8.DecodeRune(g.partial); r == utf8.RuneError && size == 1 {
		return nil, g.fail(binaryData(fmt.Sprintf("invalid UTF-8 byte 0x%02x at column %d", g.partial[0], g.lineLen+1)))
	}
	g.lineLen += len(g.partial)
	g.partial = g.partial[:0]
	return b, nil
}

// ascii accounts for one single-byte character.
func (g *guard) ascii(c byte) error {
	switch {
	case c == '\n':
		if err := g.checkLen(); err != nil {
			return err
		}
		if err := g.endLine(); err != nil {
			return err
		}
		g.line++
		g.lineLen, g.lineCtrl = 0, 0
		return nil
	case c == 0:
		return g.fail(binaryData(fmt.Sprintf("a NUL byte at column %d", g.lineLen+1)))
	case c < 0x20 && c != '\t' && c != '\r', c == 0x7f:
		g.lineCtrl++
	}
	g.lineLen++
	return nil
}

func (g *guard) checkLen() error {
	if g.lim.maxLine > 0 && g.lineLen > g.lim.maxLine {
		return g.fail(fmt.Errorf("line longer than %d MB", g.lim.maxLine>>20))
	}
	return nil
}

// endLine refuses a line that is mostly control characters: text has a
// tab or an escape here and there, binary data has them everywhere.
func (g *guard) endLine() error {
	if g.lineCtrl >= minCtrl && g.lineCtrl*ctrlShare > g.lineLen {
		return g.fail(binaryData(fmt.Sprintf("%d of %d bytes are control characters", g.lineCtrl, g.lineLen)))
	}
	return nil
}

// A line is binary when at least minCtrl of its bytes, and more than one
// in ctrlShare, are control characters other than tab and CR.
const (
	minCtrl   = 2
	ctrlShare = 8
)

// finish checks the end of the content: the last line, and a character
// cut by the end of the file.
func (g *guard) finish() error {
	if len(g.partial) > 0 {
		return g.fail(binaryData(fmt.Sprintf("invalid UTF-8 byte 0x%02x at column %d (cut by the end of the file)", g.partial[0], g.lineLen+1)))
	}
	return g.endLine()
}

// binaryDataError says what was found, and what llmload wants instead.
func binaryData(what string) error {
	return fmt.Errorf("binary data (%s); a data file must be UTF-8 text", what)
}
