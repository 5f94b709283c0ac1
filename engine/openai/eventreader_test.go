package openai

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/llmload/llmload/engine"
)

// parsed is an event reader's output in comparable form.
type parsed struct {
	events []string // "type|data"
	end    string   // "eof", "incomplete:<data>" or the error
}

func parseAll(src io.Reader) parsed {
	r := newEventReader(src)
	var p parsed
	for range 10000 {
		ev, err := r.next()
		switch {
		case err == nil:
			p.events = append(p.events, string(ev.Type)+"|"+string(ev.Data))
			continue
		case err == io.EOF:
			p.end = "eof"
		case errors.Is(err, errIncompleteEvent):
			p.end = "incomplete:" + string(ev.Data)
		default:
			p.end = err.Error()
		}
		return p
	}
	p.end = "runaway"
	return p
}

func TestEventReader(t *testing.T) {
	tests := map[string]struct {
		in     string
		events []string
		end    string
	}{
		"empty":                  {"", nil, "eof"},
		"one event":              {"data: x\n\n", []string{"|x"}, "eof"},
		"no space after colon":   {"data:x\n\n", []string{"|x"}, "eof"},
		"only one space dropped": {"data:  x\n\n", []string{"| x"}, "eof"},
		"CRLF":                   {"data: a\r\n\r\ndata: b\r\n\r\n", []string{"|a", "|b"}, "eof"},
		"CR":                     {"data: a\r\rdata: b\r\r", []string{"|a", "|b"}, "eof"},
		"mixed endings":          {"data: a\r\n\rdata: b\n\r\n", []string{"|a", "|b"}, "eof"},
		"multi-line data":        {"data: {\"a\":\ndata: 1}\n\n", []string{"|{\"a\":\n1}"}, "eof"},
		"empty data line":        {"data\n\n", []string{"|"}, "eof"},
		"comments ignored":       {": ping\n\n:\ndata: x\n: mid\n\n", []string{"|x"}, "eof"},
		"event type":             {"event: error\ndata: boom\n\ndata: next\n\n", []string{"error|boom", "|next"}, "eof"},
		"id and retry tolerated": {"id: 7\nretry: 100\ndata: x\n\n", []string{"|x"}, "eof"},
		"unknown field ignored":  {"foo: bar\ndata: x\n\n", []string{"|x"}, "eof"},
		"blank lines only":       {"\n\n\r\n\r\r", nil, "eof"},
		"type without data":      {"event: x\n\ndata: y\n\n", []string{"|y"}, "eof"},
		"data: prefix is exact":  {"Data: x\n\ndatax: y\n\n", nil, "eof"},
		"non-ASCII":              {"data: 你好\n\n", []string{"|你好"}, "eof"},
		"final event unfinished": {"data: a\n\ndata: b\n", []string{"|a"}, "incomplete:b"},
		"final line unfinished":  {"data: a\n\ndata: [DONE]", []string{"|a"}, "incomplete:[DONE]"},
		"cut inside field name":  {"data: a\n\ndat", []string{"|a"}, "incomplete:"},
		"trailing comment line":  {"data: a\n\n: bye\n", []string{"|a"}, "eof"},
		"final CR":               {"data: a\r\r", []string{"|a"}, "eof"},
	}
	readers := map[string]func(string) io.Reader{
		"whole":       func(s string) io.Reader { return strings.NewReader(s) },
		"byte a time": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":        func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for name, tt := range tests {
		for rname, mk := range readers {
			t.Run(name+"/"+rname, func(t *testing.T) {
				got := parseAll(mk(tt.in))
				if g, w := strings.Join(got.events, ","), strings.Join(tt.events, ","); g != w {
					t.Errorf("events = %q, want %q", g, w)
				}
				if g, w := got.end, tt.end; g != w {
					t.Errorf("end = %q, want %q", g, w)
				}
			})
		}
	}
}

func TestEventReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := map[string]struct {
		src  io.Reader
		want error
	}{
		"read error after data": {io.MultiReader(strings.NewReader("data: a\n"), iotest.ErrReader(boom)), boom},
		"no progress":           {zeroReader{}, io.ErrNoProgress},
		"line too long":         {io.LimitReader(repeatReader('x'), maxEventSize+10), errEventTooLarge},
		"event too large": {io.MultiReader(strings.NewReader("data: "+strings.Repeat("x", maxEventSize/2)+"\n"),
			strings.NewReader("data: "+strings.Repeat("x", maxEventSize/2)+"\n\n")), errEventTooLarge},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := newEventReader(tt.src)
			_, err := r.next()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if _, again := r.next(); !errors.Is(again, tt.want) {
				t.Errorf("second err = %v, want the same (sticky) error", again)
			}
		})
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestEventReaderStampsArrival(t *testing.T) {
	pr, pw := io.Pipe()
	r := newEventReader(pr)
	go func() {
		_, _ = pw.Write([]byte("data: a\n"))
		_, _ = pw.Write([]byte("\ndata: b\n\n"))
		_ = pw.Close()
	}()
	a, err := r.next()
	if err != nil {
		t.Fatal(err)
	}
	atA := a.At
	b, err := r.next()
	if err != nil {
		t.Fatal(err)
	}
	// Both events were completed by the second read.
	if got, want := b.At, atA; !got.Equal(want) {
		t.Errorf("second event stamped %v, want the time of the read that completed it (%v)", got, want)
	}
	if atA.IsZero() {
		t.Error("event not stamped")
	}
}

// FuzzSSE checks that the reader never panics, never loops, and parses a
// stream the same way however the bytes are split into reads.
func FuzzSSE(f *testing.F) {
	for _, seed := range []string{
		"data: x\n\n", "data: a\r\n\r\ndata: b\r\r", ": ping\n\ndata: [DONE]\n\n",
		"event: error\ndata: {}\n\n", "data: {\"a\":\ndata: 1}\n\n", "data: a\r", "dat", "\r\n\r\n\n",
		roleChunk() + contentChunk("x") + usageChunk(1, 1) + done(),
		cumChunk("", 0) + reasoningChunk("reasoning", "hm") + cumChunk("a b", 3) + usageRaw(`{"completion_tokens":-1}`) + done(),
		textChunk("once") + ev(`{"choices":[{"index":0,"text":"","finish_reason":"length"}]}`),
	} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint8) {
		whole := parseAll(bytes.NewReader(in))
		chunked := parseAll(&splitReader{data: in, n: int(split%16) + 1})
		if g, w := strings.Join(chunked.events, "\x00"), strings.Join(whole.events, "\x00"); g != w {
			t.Errorf("split reads gave events %q, whole read %q", g, w)
		}
		if chunked.end != whole.end {
			t.Errorf("split reads ended %q, whole read %q", chunked.end, whole.end)
		}
		for _, e := range whole.events {
			if strings.ContainsAny(e, "\r") {
				t.Errorf("event %q contains a CR", e)
			}
		}
		consumeAll(in)
	})
}

// fuzzClient counts tokens for consumeAll.
var fuzzClient = func() *Client {
	tok, err := loadTokenizer("")
	if err != nil {
		panic(err)
	}
	return &Client{tok: tok}
}()

// consumeAll runs in through the whole stream decoder and the token counts,
// which must not panic whatever the events hold.
func consumeAll(in []byte) {
	d := getDecoder(bytes.NewReader(in))
	defer putDecoder(d)
	res := &engine.Result{Start: time.Now()}
	w := startWatchdog(res.Start, timeouts{time.Hour, time.Hour, time.Hour}, func(error) {})
	defer w.stop()
	s := stream{res: res, w: w, dialect: chatDialect{}, chunk: &d.chunk, dec: &d.cd, itlHint: 4}
	for {
		ev, err := d.er.next()
		if err != nil || s.handle(ev) != nil || s.done {
			break
		}
	}
	s.finish()
	fuzzClient.countTokens(res, &s.tally, chatReq())
	s.tpot()
	var chunkGaps, tokenGaps time.Duration
	for _, d := range res.ITL {
		chunkGaps += d
	}
	for _, d := range res.TokenITL {
		tokenGaps += d
	}
	if tokenGaps > chunkGaps {
		panic("token gaps add up to more than the chunk gaps")
	}
}

// splitReader returns at most n bytes per Read.
type splitReader struct {
	data []byte
	n    int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), s.n)], s.data)
	s.data = s.data[n:]
	return n, nil
}

// Receive stamps that come out of order by a few ns never make an event
// earlier than the one before it.
func TestEventTimesNeverRunBackwards(t *testing.T) {
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	stamps := []time.Time{base.Add(1000), base.Add(900), base.Add(2000)}
	src := &splitReader{data: []byte("data: a\n\ndata: b\n\ndata: c\n\n"), n: len("data: a\n\n")}
	r := newEventReader(src)
	i := 0
	r.clock = func() time.Time { at := stamps[min(i, len(stamps)-1)]; i++; return at }
	var got []time.Time
	for {
		ev, err := r.next()
		if err != nil {
			break
		}
		got = append(got, ev.At)
	}
	want := []time.Time{base.Add(1000), base.Add(1000), base.Add(2000)}
	if len(got) != 3 || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) || !got[2].Equal(want[2]) {
		t.Errorf("event times %v, want %v", got, want)
	}
}
