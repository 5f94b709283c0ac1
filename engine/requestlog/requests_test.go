package requestlog

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"time"

	goldenfile "github.com/llmload/llmload/engine/golden"

	"github.com/llmload/llmload/engine"
)

// requestSamples covers a success with every field, a failure with an
// awkward message, a sample that measured nothing, an open-model one of a
// trace's first record, an embeddings request and a Messages answer that
// called two tools.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func requestSamples() []engine.Sample {
	ms := time.Millisecond
	return []engine.Sample{
		{Scenario: "chat", Stage: "c1", Tags: map[string]string{"prompt": "short", "lang": "zh"},
			Result: engine.Result{Start: t0.Add(1500 * ms), Status: 200,
				TTFB: 12345 * time.Microsecond, Connect: 1250 * time.Microsecond, TLS: 980 * time.Microsecond, TTFT: 31260 * time.Microsecond, TTFC: 250 * ms, E2E: 1234567 * time.Microsecond,
				TPOT: 8123456, ITL: []time.Duration{ms}, Server: &engine.ServerTimings{PromptN: 40, CachedN: 2, PromptMS: 20.5, PredictedN: 180, PredictedMS: 1450.2, PredictedPerTokenMS: 8.1017}, InputTokens: 42, InputTokensSource: engine.TokensFromUsage, CachedTokens: 2,
				OutputTokens: 180, TokensSource: engine.TokensFromUsage, ReasoningTokens: 30, ClientOutputTokens: 182,
				Text: "the answer", Streamed: true}},
		{Scenario: "chat", Stage: "c1", Tags: map[string]string{"odd key": "a;b=c%d"}, Dirty: "malformed_json",
			Result: engine.Result{Start: t0.Add(2 * time.Second), Status: 502, TTFB: 3 * ms,
				Err:      &engine.Error{Class: "http_5xx:502", Message: "upstream said \"no\", twice,\nthen <html>&nbsp;</html>"},
				Streamed: true}},
		{Scenario: "chat", Stage: "warmup", Warmup: true,
			Result: engine.Result{Start: t0.Add(-time.Second), Err: &engine.Error{Class: engine.ErrConnRefused, Message: "dial tcp 127.0.0.1:1: connect: connection refused"}}},
		{Scenario: "rag", Stage: "steady", Scheduled: t0.Add(10 * time.Second), TraceRecord: 1, // the trace's first record
			Result: engine.Result{Start: t0.Add(10*time.Second + 250*time.Microsecond), Status: 200, Target: "replica-b",
				TTFB: 5 * ms, TTFT: 5 * ms, TTFC: 5 * ms, E2E: 9 * ms, InputTokens: 0, InputTokensSource: engine.TokensFromTokenizer,
				OutputTokens: 1, TokensSource: engine.TokensFromEvents, Streamed: false}},
		{Scenario: "rag", Stage: "steady",
			Result: engine.Result{API: engine.EndpointEmbeddings, Start: t0.Add(11 * time.Second), Status: 200, TTFB: 4 * ms, E2E: 5 * ms,
				InputTokens: 30, InputTokensSource: engine.TokensFromUsage, Inputs: 8, Dimensions: 384}},
		{Scenario: "agent", Stage: "c1",
			Result: engine.Result{API: engine.EndpointMessages, Start: t0.Add(12 * time.Second), Status: 200, TTFB: 2 * ms, TTFT: 40 * ms,
				TTFC: 40 * ms, E2E: 90 * ms, InputTokens: 12, InputTokensSource: engine.TokensFromUsage, OutputTokens: 9,
				TokensSource: engine.TokensFromUsage, ToolCalls: make([]engine.ToolCall, 2), Streamed: true}},
		{Scenario: "vision", Stage: "c1",
			Result: engine.Result{API: engine.EndpointChat, Start: t0.Add(13 * time.Second), Status: 200, TTFB: 30 * ms, TTFT: 60 * ms,
				TTFC: 60 * ms, E2E: 400 * ms, InputTokens: 1210, InputTokensSource: engine.TokensFromUsage, OutputTokens: 20,
				TokensSource: engine.TokensFromUsage, Streamed: true, Encode: 1500 * time.Microsecond, Upload: 25 * ms,
				BodyBytes: 2_345_678, Images: 2, Audios: 1, AudioIn: 3.25, MediaTokens: 1190}},
		{Scenario: "voice", Stage: "c1",
			Result: engine.Result{API: engine.EndpointSpeech, Start: t0.Add(14 * time.Second), Status: 200, TTFB: 20 * ms, TTFT: 80 * ms,
				E2E: 900 * ms, Streamed: true, Upload: 100 * time.Microsecond, BodyBytes: 96, AudioOut: 2.5, AudioBytes: 120_044}},
		// A request the server traced: its span splits the TTFT.
		{Scenario: "chat", Stage: "c8",
			Result: engine.Result{Start: t0.Add(15 * time.Second), Status: 200, TTFB: 3 * ms, TTFT: 250 * ms, TTFC: 250 * ms,
				E2E: 1250 * ms, Streamed: true, Upload: 200 * time.Microsecond, OutputTokens: 100, TokensSource: engine.TokensFromUsage,
				TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", RequestID: "chatcmpl-7f3a",
				Span: &engine.ServerSpan{RequestID: "chatcmpl-7f3a", Queue: 180 * ms, Prefill: 60 * ms, Decode: 990 * ms,
					TTFT: 245 * ms, E2E: 1240 * ms, PromptTokens: -1, CompletionTokens: -1}}},
		// One whose server timed more than the client measured: the
		// residual is negative, kept as it is.
		{Scenario: "chat", Stage: "c8",
			Result: engine.Result{Start: t0.Add(16 * time.Second), Status: 200, TTFB: 3 * ms, TTFT: 50 * ms, TTFC: 50 * ms,
				E2E: 60 * ms, Streamed: true, TraceID: "00f067aa0ba902b7a3ce929d0e0e4736", RequestID: "chatcmpl-7f3b",
				Span: &engine.ServerSpan{Queue: 40 * ms, Prefill: 12500 * time.Microsecond, Decode: engine.Absent,
					TTFT: engine.Absent, E2E: engine.Absent, PromptTokens: -1, CompletionTokens: -1}}},
	}
}

func writeRecords(t *testing.T, format string, samples []engine.Sample) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewRequestWriter(&b, format, t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		w.Write(s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRequestWriterGolden(t *testing.T) {
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			goldenfile.Check(t, "requests."+format+".golden", writeRecords(t, format, requestSamples()))
		})
	}
}

// TestRequestCSVReadBack parses the CSV as a user's tool would and checks
// every awkward value survived.
func TestRequestCSVReadBack(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(writeRecords(t, FormatCSV, requestSamples()))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rows), 1+len(requestSamples()); got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	if got, want := rows[0], RequestColumns(); !reflect.DeepEqual(got, want) {
		t.Errorf("header = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		row        int
		col, value string
	}{
		{1, "start_offset_ms", "1500.000"},
		{1, "tags", "lang=zh;prompt=short"},
		{1, "ttft_ms", "31.260"},
		{1, "tpot_ms", "8.123"},
		{1, "e2e_ms", "1234.567"},
		{1, "reasoning_tokens", "30"},
		{1, "scheduled_lag_ms", ""},
		{1, "warmup", "false"},
		{2, "error_message", "upstream said \"no\", twice,\nthen <html>&nbsp;</html>"},
		{2, "tags", "odd key=a%3Bb%3Dc%25d"},
		{2, "dirty", "malformed_json"},
		{2, "ttft_ms", ""},
		{2, "output_tokens", ""},
		{2, "tokens_source", ""},
		{3, "start_offset_ms", "-1000.000"},
		{3, "status", ""},
		{3, "streamed", "false"},
		{3, "warmup", "true"},
		{3, "tags", ""},
		{4, "scheduled_lag_ms", "0.250"},
		{4, "input_tokens", "0"},
		{4, "client_output_tokens", ""},
		{4, "output_tokens", "1"},
		{1, "cached_tokens", "2"},
		{1, "trace_record", ""},
		{4, "cached_tokens", ""},
		{4, "trace_record", "0"},
		{1, "encode_ms", ""},
		{1, "body_bytes", ""},
		{7, "encode_ms", "1.500"},
		{7, "upload_ms", "25.000"},
		{7, "body_bytes", "2345678"},
		{7, "images", "2"},
		{7, "audios", "1"},
		{7, "videos", ""},
		{7, "audio_in_s", "3.250"},
		{7, "media_tokens", "1190"},
		{7, "audio_out_s", ""},
		{8, "api", "speech"},
		{8, "audio_out_s", "2.500"},
		{8, "audio_bytes", "120044"},
	} {
		col := columnIndex(t, tc.col)
		if got := rows[tc.row][col]; got != tc.value {
			t.Errorf("row %d %s = %q, want %q", tc.row, tc.col, got, tc.value)
		}
	}
}

func columnIndex(t *testing.T, name string) int {
	t.Helper()
	for i, c := range RequestColumns() {
		if c == name {
			return i
		}
	}
	t.Fatalf("no column %q", name)
	return -1
}

// TestRequestJSONLReadBack checks every line is an object with every
// column, and that absent values are null rather than 0, but for the
// media columns, which are left out when empty.
func TestRequestJSONLReadBack(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(string(writeRecords(t, FormatJSONL, requestSamples())), "\n"), "\n")
	if got, want := len(lines), len(requestSamples()); got != want {
		t.Fatalf("%d lines, want %d", got, want)
	}
	var recs []map[string]any
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		for j, col := range RequestColumns() {
			if _, ok := m[col]; !ok && j < firstOmittable {
				t.Errorf("line %d has no %s", i+1, col)
			}
		}
		recs = append(recs, m)
	}
	for _, tc := range []struct {
		rec int
		key string
	}{{0, "encode_ms"}, {1, "body_bytes"}, {5, "images"}, {6, "audio_out_s"}, {6, "videos"}, {7, "images"}, {7, "encode_ms"}} {
		if v, ok := recs[tc.rec][tc.key]; ok {
			t.Errorf("record %d has %s = %v, want an empty media column left out", tc.rec, tc.key, v)
		}
	}
	for _, tc := range []struct {
		rec  int
		key  string
		want any
	}{
		{0, "ttft_ms", 31.26},
		{0, "tags", map[string]any{"lang": "zh", "prompt": "short"}},
		{0, "streamed", true},
		{1, "error_message", "upstream said \"no\", twice,\nthen <html>&nbsp;</html>"},
		{1, "ttft_ms", nil},
		{1, "output_tokens", nil},
		{2, "status", nil},
		{2, "tags", nil},
		{3, "scheduled_lag_ms", 0.25},
		{3, "input_tokens", 0.0},
		{0, "cached_tokens", 2.0},
		{0, "trace_record", nil},
		{3, "cached_tokens", nil},
		{3, "trace_record", 0.0},
		{6, "upload_ms", 25.0},
		{6, "audio_in_s", 3.25},
		{6, "body_bytes", 2345678.0},
		{7, "audio_bytes", 120044.0},
		{7, "audio_out_s", 2.5},
	} {
		if got := recs[tc.rec][tc.key]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("record %d %s = %#v, want %#v", tc.rec, tc.key, got, tc.want)
		}
	}
}

// lockedBuffer is a bytes.Buffer the test can read while the writer
// goroutine writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRequestWriterConcurrent(t *testing.T) {
	const goroutines, each = 8, 500
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			var b lockedBuffer
			w, err := NewRequestWriter(&b, format, t0)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						w.Write(engine.Sample{Scenario: "s", Stage: "x",
							Tags:   map[string]string{"id": fmt.Sprintf("%d-%d", g, i)},
							Result: engine.Result{Start: t0.Add(time.Duration(i) * time.Millisecond)}})
					}
				})
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ids := recordIDs(t, format, b.String())
			if got, want := len(ids), goroutines*each; got != want {
				t.Errorf("%d distinct records, want %d", got, want)
			}
		})
	}
}

// recordIDs returns the distinct "id" tags of a CSV or JSONL output.
func recordIDs(t *testing.T, format, out string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	if format == FormatCSV {
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows[1:] {
			ids[r[columnIndex(t, "tags")]] = true
		}
		return ids
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var rec struct {
			Tags map[string]string `json:"tags"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		ids[rec.Tags["id"]] = true
	}
	return ids
}

// TestRequestWriterFlushesWhileRunning: records reach the file within
// about a second without Close, so an interrupted run keeps them.
func TestRequestWriterFlushesWhileRunning(t *testing.T) {
	var b lockedBuffer
	w, err := NewRequestWriter(&b, FormatJSONL, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write(engine.Sample{Scenario: "s", Stage: "early"})
	deadline := time.Now().Add(10 * time.Second) // generous: the flush is every second
	for !strings.Contains(b.String(), `"early"`) {
		if time.Now().After(deadline) {
			t.Fatal("record not flushed within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRequestWriterCloseFlushes: a record smaller than any buffer is on
// disk once Close returns, and later Writes and Closes are harmless.
func TestRequestWriterCloseFlushes(t *testing.T) {
	for _, format := range []string{FormatCSV, FormatJSONL} {
		t.Run(format, func(t *testing.T) {
			var b lockedBuffer
			w, err := NewRequestWriter(&b, format, t0)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(engine.Sample{Scenario: "s", Stage: "last"})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); !strings.Contains(got, "last") {
				t.Errorf("after Close the output lacks the record:\n%s", got)
			}
			w.Write(engine.Sample{Scenario: "s", Stage: "late"})
			if err := w.Close(); err != nil {
				t.Errorf("second Close = %v", err)
			}
			if got := b.String(); strings.Contains(got, "late") {
				t.Errorf("a Write after Close was written:\n%s", got)
			}
		})
	}
}

// gateWriter blocks every Write until open is closed.
type gateWriter struct {
	open chan struct{}
	lockedBuffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	return g.lockedBuffer.Write(p)
}

// TestRequestWriterBlocksRatherThanDrops fills the queue behind a stalled
// file: Write must wait, and every record must arrive once it drains.
func TestRequestWriterBlocksRatherThanDrops(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	w, err := NewRequestWriter(g, FormatJSONL, t0)
	if err != nil {
		t.Fatal(err)
	}
	n := DefaultRequestBuffer + 200 // more than queue and bufio buffer hold
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			w.Write(engine.Sample{Scenario: "s", Stage: "x", Tags: map[string]string{"id": fmt.Sprint(i)}})
		}
	}()
	select {
	case <-done:
		t.Fatal("all Writes returned while the file was stalled: records were dropped or buffered without bound")
	case <-time.After(200 * time.Millisecond):
	}
	close(g.open)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Writes still blocked 30 s after the file drained")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(recordIDs(t, FormatJSONL, g.String())), n; got != want {
		t.Errorf("%d records written, want %d", got, want)
	}
}

// errWriter fails every write after the first ok bytes.
type errWriter struct{ ok int }

func (e *errWriter) Write(p []byte) (int, error) {
	if len(p) <= e.ok {
		e.ok -= len(p)
		return len(p), nil
	}
	return 0, errors.New("disk full")
}

func TestRequestWriterErrors(t *testing.T) {
	if _, err := NewRequestWriter(&bytes.Buffer{}, "xml", t0); !errors.Is(err, ErrRequestFormat) ||
		!strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("format xml: err = %v, want %v naming it", err, ErrRequestFormat)
	}
	if _, err := NewRequestWriter(nil, FormatCSV, t0); !errors.Is(err, ErrNilWriter) {
		t.Errorf("nil writer: err = %v, want %v", err, ErrNilWriter)
	}
	if _, err := NewRequestWriter(&errWriter{}, FormatCSV, t0); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("unwritable CSV: err = %v, want the header's write error", err)
	}
	// A dead file must not block the run: Writes keep returning and Close
	// reports the failure.
	w, err := NewRequestWriter(&errWriter{}, FormatJSONL, t0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2*DefaultRequestBuffer + 100 {
			w.Write(engine.Sample{Scenario: "s", Stage: strings.Repeat("x", 100)})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Writes blocked on a failing file")
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
}

// TestRequestColumnsIsACopy: callers cannot change the header.
func TestRequestColumnsIsACopy(t *testing.T) {
	c := RequestColumns()
	c[0] = "changed"
	if got, want := RequestColumns()[0], "start_offset_ms"; got != want {
		t.Errorf("RequestColumns()[0] = %q, want %q", got, want)
	}
}

func BenchmarkRequestWriter(b *testing.B) {
	s := requestSamples()[0]
	for _, format := range []string{FormatCSV, FormatJSONL} {
		b.Run(format, func(b *testing.B) {
			w, err := NewRequestWriter(io.Discard, format, t0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.Write(s)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestRequestWriterCloseDuringWrites: Writes racing with Close neither
// panic nor corrupt the file; each record is whole or absent.
func TestRequestWriterCloseDuringWrites(t *testing.T) {
	var b lockedBuffer
	w, err := NewRequestWriter(&b, FormatCSV, t0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				w.Write(engine.Sample{Scenario: "s", Stage: "x", Tags: map[string]string{"id": fmt.Sprintf("%d-%d", g, i)}})
			}
		})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if ids := recordIDs(t, FormatCSV, b.String()); len(ids) > 8000 {
		t.Errorf("%d records, want at most 8000", len(ids))
	}
}

// TestRequestRecordsRedactCredentials: a credential that reached a sample's
// message unredacted (echoed Authorization values) is not written.
func TestRequestRecordsRedactCredentials(t *testing.T) {
	const basic = "Basic YWxpY2U6c2stc2VjcmV0LXB3" // alice:sk-secret-pw
	const bearer = "Bearer sk-live-0123456789abcdef"
	s := engine.Sample{Result: engine.Result{Status: 401,
		Err: &engine.Error{Class: "http_4xx:401", Message: "bad header " + basic + " / " + bearer}}}
	for _, format := range []string{FormatCSV, FormatJSONL} {
		out := string(writeRecords(t, format, []engine.Sample{s}))
		for _, secret := range []string{"YWxpY2U6c2stc2VjcmV0LXB3", "sk-live-0123456789abcdef"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s record keeps %q:\n%s", format, secret, out)
			}
		}
		if !strings.Contains(out, "bad header Basic [redacted] / Bearer [redacted]") {
			t.Errorf("%s record lost the message:\n%s", format, out)
		}
	}
}
