package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// In the fixed-delay mode every stream, however many run at once, has its
// first token FixedTTFT after arrival and the next ones FixedITL apart,
// runs to max_tokens and carries the role in its first content chunk.
func TestFixedDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{FixedTTFT: 200 * time.Millisecond, FixedITL: 10 * time.Millisecond, MaxBatch: 2})
		defer s.Close()
		body := chatBody(t, "fixed", map[string]any{"stream": true, "max_tokens": 64})
		res := streamsInProcess(s, body, 50) // far beyond MaxBatch: no queue in this mode
		for i, r := range res {
			if r.ttft != 200*time.Millisecond || r.contents != 64 || r.tpot() != 10*time.Millisecond || !r.done {
				t.Fatalf("stream %d: TTFT %v, %d contents, TPOT %v, done %t; want 200ms, 64, 10ms, true",
					i, r.ttft, r.contents, r.tpot(), r.done)
			}
		}
	})
	rec := serve(New(Config{FixedTTFT: time.Millisecond, FixedITL: time.Millisecond}), http.MethodPost, "/v1/chat/completions",
		chatBody(t, "fixed", map[string]any{"stream": true, "max_tokens": 3}), nil)
	first, _, _ := strings.Cut(rec.Body.String(), "\n\n")
	if !strings.Contains(first, `"role":"assistant"`) || !strings.Contains(first, `"content":"`) ||
		strings.Contains(first, `"content":""`) {
		t.Errorf("first event %s: want the role and the first content in one chunk", first)
	}
}

func TestFixedDelayNeedsBoth(t *testing.T) {
	for _, c := range []Config{{FixedTTFT: time.Second}, {FixedITL: time.Second}, {FixedTTFT: -1, FixedITL: time.Second}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (Config{FixedTTFT: time.Second, FixedITL: time.Millisecond}).Validate(); err != nil {
		t.Errorf("both set: %v", err)
	}
}

// The truth log has one line per request, with the server's own timings
// of streamed answers and the status of rejected and reset ones.
func TestTruthLog(t *testing.T) {
	var log bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{FixedTTFT: 200 * time.Millisecond, FixedITL: 10 * time.Millisecond, TruthLog: &log,
			Defects: map[string]string{KindEmpty: DefectReset}})
		streamsInProcess(s, chatBody(t, "fixed", map[string]any{"stream": true, "max_tokens": 8}), 3)
		serve(s, http.MethodPost, "/v1/chat/completions", chatBody(t, "whole", map[string]any{"max_tokens": 5}), nil)
		serve(s, http.MethodPost, "/v1/chat/completions", `{"messages":[]}`, nil)
		func() {
			defer func() { _ = recover() }() // a reset aborts the in-process handler
			serve(s, http.MethodPost, "/v1/chat/completions", chatBody(t, "", nil), nil)
		}()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
	var recs []TruthRecord
	dec := json.NewDecoder(&log)
	for dec.More() {
		var r TruthRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6:\n%+v", len(recs), recs)
	}
	for _, r := range recs[:3] {
		if r.Status != 200 || !r.Complete || r.Tokens != 8 || r.TTFTMS != 200 || r.TPOTMS != 10 || r.E2EMS != 270 ||
			!strings.HasPrefix(r.ID, "chatcmpl-sim-") || r.Arrival.IsZero() {
			t.Errorf("streamed record %+v: want 200, complete, 8 tokens, TTFT 200, TPOT 10, E2E 270", r)
		}
	}
	if r := recs[3]; r.Status != 200 || !r.Complete || r.Tokens != 5 || r.TTFTMS != 0 || r.E2EMS != 240 {
		t.Errorf("whole answer %+v: want 200, complete, 5 tokens, no TTFT, E2E 240", r)
	}
	if r := recs[4]; r.Status != 400 || r.Complete || !strings.HasPrefix(r.ID, "chatcmpl-sim-") {
		t.Errorf("rejected %+v: want 400, not complete, an id (its x-request-id)", r)
	}
	if r := recs[5]; r.Status != 0 || r.Complete {
		t.Errorf("reset %+v: want status 0, not complete", r)
	}
}
