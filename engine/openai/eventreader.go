package openai

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// Event reader limits. An event larger than maxEventSize is not an LLM
// stream chunk; refusing it bounds memory when a server answers with a huge
// body that contains no line breaks.
const (
	initialBufSize = 2 << 10 // an event or a few; 4 KB held 20 MB more at 10,000 streams for 5 ns an event
	maxEventSize   = 4 << 20
	maxEmptyReads  = 100
)

var (
	// errIncompleteEvent reports a stream that ended inside an event: bytes
	// after the last blank line were never terminated.
	errIncompleteEvent = errors.New("stream ended inside an event")
	// errEventTooLarge reports a line or event over maxEventSize.
	errEventTooLarge = errors.New("event larger than 4 MiB")
)

// event is one dispatched server-sent event. Data and Type alias the
// reader's buffers and are valid only until the next call to next.
type event struct {
	Data []byte
	Type []byte
	// At is when the read that completed the event returned, taken before
	// anything is decoded, so decoding cost never shows up in the timings.
	At time.Time
}

// eventReader parses a text/event-stream as the WHATWG spec defines it:
// lines end in \n, \r\n or \r; data lines of one event are joined with \n;
// comments (lines starting with ':') and unknown fields are ignored; a blank
// line dispatches the event. Unlike the spec, an event cut off by the end of
// the stream is reported (errIncompleteEvent) rather than silently dropped,
// because a benchmark must tell a truncated stream from a finished one.
// It reuses its buffers, so steady-state reading does not allocate.
// Not safe for concurrent use.
type eventReader struct {
	src    io.Reader
	buf    []byte
	r, w   int // unread bytes are buf[r:w]
	err    error
	readAt time.Time
	// clock stamps the reads, nil for time.Now: the client gives the
	// kernel's receive time where the connection keeps it.
	clock func() time.Time

	data    []byte
	typ     []byte
	hasData bool
	// skipLF is set when a line ended in \r at the end of the buffered
	// bytes: a following \n belongs to the same line break. Deciding later
	// instead of peeking avoids waiting on the socket for one byte.
	skipLF bool
}

func newEventReader(src io.Reader) *eventReader {
	r := &eventReader{buf: make([]byte, initialBufSize)}
	r.reset(src)
	return r
}

// reset prepares r to read a new stream, keeping its buffers.
func (r *eventReader) reset(src io.Reader) {
	r.src = src
	r.r, r.w = 0, 0
	r.err = nil
	r.readAt, r.clock = time.Time{}, nil
	r.data, r.typ = r.data[:0], r.typ[:0]
	r.hasData, r.skipLF = false, false
}

// next returns the next event. At a clean end of stream it returns io.EOF;
// when the stream ends inside an event it returns errIncompleteEvent with
// whatever data that event had gathered; any other read error is returned
// as is. Errors are sticky.
func (r *eventReader) next() (event, error) {
	r.data, r.typ, r.hasData = r.data[:0], r.typ[:0], false
	for {
		line, ok := r.line()
		if !ok {
			if err := r.fill(); err != nil {
				return r.end(err)
			}
			continue
		}
		if len(line) > 0 {
			if err := r.field(line); err != nil {
				r.err = err
				return event{}, err
			}
			continue
		}
		if r.hasData {
			return event{Data: r.data, Type: r.typ, At: r.readAt}, nil
		}
		r.typ = r.typ[:0]
	}
}

// line returns the next complete line without its terminator, or false
// when the buffer holds no complete line.
func (r *eventReader) line() ([]byte, bool) {
	if r.skipLF && r.r < r.w {
		if r.buf[r.r] == '\n' {
			r.r++
		}
		r.skipLF = false
	}
	rest := r.buf[r.r:r.w]
	lf := bytes.IndexByte(rest, '\n')
	seg := rest
	if lf >= 0 {
		seg = rest[:lf]
	}
	if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
		switch {
		case cr+1 == len(rest):
			r.skipLF = true
			r.r += cr + 1
		case rest[cr+1] == '\n':
			r.r += cr + 2
		default:
			r.r += cr + 1
		}
		return rest[:cr], true
	}
	if lf < 0 {
		return nil, false
	}
	r.r += lf + 1
	return rest[:lf], true
}

// field applies one non-empty line to the event being built.
func (r *eventReader) field(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon == 0 {
		return nil // comment, e.g. a ": ping" keep-alive
	}
	name, value := line, []byte(nil)
	if colon > 0 {
		name, value = line[:colon], line[colon+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > maxEventSize {
			return errEventTooLarge
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.typ = append(r.typ[:0], value...)
	}
	return nil
}

// fill reads more bytes from src, compacting or growing the buffer first.
// It returns nil when at least one byte arrived.
func (r *eventReader) fill() error {
	if r.err != nil {
		return r.err
	}
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if r.w == len(r.buf) {
		if len(r.buf) >= maxEventSize {
			r.err = errEventTooLarge
			return r.err
		}
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.w:])
		if n > 0 {
			// Kernel receive stamps are converted to wall time one by one
			// and can come out a few ns out of order: time never runs
			// backwards within a response, or a gap would be negative.
			if at := r.now(); at.After(r.readAt) {
				r.readAt = at
			}
			r.w += n
		}
		if err != nil {
			r.err = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	r.err = io.ErrNoProgress
	return r.err
}

// now is the time of a read that just returned.
func (r *eventReader) now() time.Time {
	if r.clock != nil {
		return r.clock()
	}
	return time.Now()
}

// end turns the error that stopped reading into next's result. At EOF the
// unterminated rest of the buffer is parsed, so that an event cut off before
// its blank line can still be inspected (it may be a final [DONE]).
func (r *eventReader) end(err error) (event, error) {
	if err != io.EOF {
		return event{}, err
	}
	pending := r.r < r.w || r.hasData || len(r.typ) > 0
	if r.r < r.w {
		if ferr := r.field(r.buf[r.r:r.w]); ferr != nil {
			r.err = ferr
			return event{}, ferr
		}
		r.r = r.w
	}
	if !pending {
		return event{}, io.EOF
	}
	r.err = errIncompleteEvent
	return event{Data: r.data, Type: r.typ, At: r.readAt}, errIncompleteEvent
}
