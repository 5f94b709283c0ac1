package dataset

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// traceSource is an open trace file whose content is hashed as it is read,
// so that a replay's digest is of exactly what was parsed (a gzipped file
// and its plain text have one digest).
type traceSource struct {
	*source
	h hash.Hash
	r io.Reader
}

func openTraceSource(ctx context.Context, path string) (*traceSource, error) {
	s, err := openSource(ctx, path, textLimits)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	return &traceSource{source: s, h: h, r: io.TeeReader(s.r, h)}, nil
}

func (s *traceSource) sum() (sum [32]byte) {
	copy(sum[:], s.h.Sum(nil))
	return sum
}

// traceReader turns the values of one file's records into TraceRecords;
// its errors name the file, the line and the field.
type traceReader struct {
	path     string
	f        TraceFormat
	sessions map[string]string // interned: a session's records share one string

	recs      []TraceRecord
	chats     []chatLink // Bailian's, one a record
	links     []treeLink // one a record
	abs       bool       // the records' times are absolute
	timed     bool       // a record with a time of its own has been read
	firstLine int
}

func newTraceReader(path string, f TraceFormat) *traceReader {
	return &traceReader{path: path, f: f, sessions: map[string]string{}}
}

func (tr *traceReader) session(s string) string {
	if v, ok := tr.sessions[s]; ok {
		return v
	}
	s = strings.Clone(s)
	tr.sessions[s] = s
	return s
}

func readTraceJSONL(ctx context.Context, tr *traceReader) ([32]byte, error) {
	s, err := openTraceSource(ctx, tr.path)
	if err != nil {
		return [32]byte{}, err
	}
	defer s.Close()
	err = scanLines(bufio.NewReaderSize(s.r, 1<<16), func(line int, b []byte) error {
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		r, err := tr.jsonRecord(line, b)
		if err != nil {
			return err
		}
		return tr.add(r)
	})
	if err != nil && !isSourceError(err) {
		return [32]byte{}, fmt.Errorf("%s:%d: reading: %w", tr.path, s.g.line, err)
	}
	return s.sum(), err
}

// jsonObject decodes one JSONL line, which must be an object.
func (tr *traceReader) jsonObject(line int, b []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	err := json.Unmarshal(b, &obj)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		err = fmt.Errorf("not a JSON object (got %s)", te.Value)
	case err != nil:
		err = fmt.Errorf("invalid JSON: %w", err)
	case obj == nil:
		err = errors.New("not a JSON object (got null)")
	case tr.f.Kind == TraceMooncake && obj["parent_chat_id"] != nil:
		// Read as Mooncake's, Bailian's seconds would pass for ms.
		err = errors.New(`parent_chat_id: this looks like an Alibaba Bailian trace (chat_id, parent_chat_id, ` +
			`timestamps in seconds): read it with format "bailian"`)
	}
	if err != nil {
		return nil, &sourceError{path: tr.path, line: line, err: err}
	}
	return obj, nil
}

// jsonRecord reads one JSONL line.
func (tr *traceReader) jsonRecord(line int, b []byte) (timed, error) {
	obj, err := tr.jsonObject(line, b)
	if err != nil {
		return timed{}, err
	}
	r := timed{rec: TraceRecord{Line: line}, chat: -1, parent: -1}
	fs := tr.f.Fields
	fail := func(field string, err error) (timed, error) { return timed{}, fieldError(tr.path, line, field, err) }
	if err := tr.jsonTree(obj, &r); err != nil {
		return timed{}, err
	}
	if r.link.child() {
		// Timed by its parent's answer: a time of its own is not needed.
	} else if r.t, err = jsonStamp(obj, fs.Time, tr.f.TimeUnit); err != nil {
		return fail(fs.Time, err)
	}
	if r.rec.Text, err = jsonText(obj[fs.Text]); err != nil {
		return fail(fs.Text, err)
	}
	if raw := obj[fs.Messages]; !isNull(raw) {
		if r.rec.Messages, err = messages(raw); err != nil {
			return fail(fs.Messages, err)
		}
	}
	given := r.rec.Text != "" || r.rec.Messages != nil
	if r.rec.Input, err = jsonLength(obj, fs.Input, 1, given); err != nil {
		return fail(fs.Input, err)
	}
	if r.rec.Output, err = jsonLength(obj, fs.Output, 0, false); err != nil {
		return fail(fs.Output, err)
	}
	if r.rec.HashIDs, err = jsonIDs(obj[fs.HashIDs]); err != nil {
		return fail(fs.HashIDs, err)
	}
	if r.rec.Session, err = tr.jsonSession(obj[fs.Session]); err != nil {
		return fail(fs.Session, err)
	}
	if tr.f.Kind == TraceBailian {
		return tr.bailianChat(r, obj)
	}
	return r, nil
}

// bailianChat reads the chat_id and parent_chat_id that link a Bailian
// session's turns.
func (tr *traceReader) bailianChat(r timed, obj map[string]json.RawMessage) (timed, error) {
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"chat_id", &r.chat}, {"parent_chat_id", &r.parent}} {
		raw, ok := obj[f.name]
		if !ok || isNull(raw) {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil {
			return timed{}, fieldError(tr.path, r.rec.Line, f.name, fmt.Errorf("expected an integer, got %s", quoteValue(string(raw))))
		}
		*f.dst = v
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

func isJSONNumber(raw json.RawMessage) bool {
	c := firstByte(raw)
	return c == '-' || (c >= '0' && c <= '9')
}

// jsonStamp reads a time: a number, or a string holding a number or a date.
func jsonStamp(obj map[string]json.RawMessage, field, unit string) (stamp, error) {
	raw, ok := obj[field]
	switch {
	case !ok || isNull(raw):
		return stamp{}, missing(obj)
	case isJSONNumber(raw):
		return parseStamp(string(raw), unit)
	case firstByte(raw) == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return stamp{}, err
		}
		return parseStamp(s, unit)
	}
	return stamp{}, fmt.Errorf("expected a number or a time, got %s", jsonKind(raw))
}

// jsonLength reads a token count; optional says a missing one is 0.
func jsonLength(obj map[string]json.RawMessage, field string, lo int, optional bool) (int, error) {
	raw, ok := obj[field]
	if !ok || isNull(raw) {
		if optional {
			return 0, nil
		}
		return 0, missing(obj)
	}
	if !isJSONNumber(raw) {
		return 0, fmt.Errorf("expected %s, got %s", map[bool]string{true: "a positive integer", false: "a non-negative integer"}[lo > 0], quoteValue(string(raw)))
	}
	return parseLength(string(raw), lo)
}

func jsonText(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("expected a string, got %s", jsonKind(raw))
	}
	return s, nil
}

// jsonIDs reads a hash_ids array, sized exactly: a trace can hold tens of
// millions of ids.
func jsonIDs(raw json.RawMessage) ([]int64, error) {
	if isNull(raw) {
		return nil, nil
	}
	if firstByte(raw) != '[' {
		return nil, fmt.Errorf("expected an array of integers, got %s", jsonKind(raw))
	}
	ids := make([]int64, 0, bytes.Count(raw, []byte{','})+1)
	if err := json.Unmarshal(raw, &ids); err != nil {
		return wideIDs(raw)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ids, nil
}

// wideIDs reads an array that did not fit []int64: ids above MaxInt64 (a
// block hash's raw 64 bits) are kept as their bit pattern; anything but an
// integer is an error.
func wideIDs(raw json.RawMessage) ([]int64, error) {
	var nums []json.RawMessage
	if err := json.Unmarshal(raw, &nums); err == nil {
		ids := make([]int64, len(nums))
		for i, n := range nums {
			if ids[i], err = parseID(string(n)); err != nil {
				break
			}
		}
		if err == nil {
			return ids, nil
		}
	}
	return nil, fmt.Errorf("expected an array of integers, got %s", quoteValue(string(raw)))
}

// jsonSession reads a session id: a string, or a number (Bailian's and
// some exports' ids are integers).
func (tr *traceReader) jsonSession(raw json.RawMessage) (string, error) {
	switch {
	case isNull(raw):
		return "", nil
	case isJSONNumber(raw):
		return tr.session(string(bytes.TrimSpace(raw))), nil
	case firstByte(raw) == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return tr.session(s), nil
	}
	return "", fmt.Errorf("expected a string or a number, got %s", jsonKind(raw))
}

// missing says a field is absent, listing the fields the record has.
func missing(obj map[string]json.RawMessage) error {
	if len(obj) == 0 {
		return errors.New("missing (the record is an empty object)")
	}
	return fmt.Errorf("missing (fields: %s)", strings.Join(sortedKeys(obj), ", "))
}
