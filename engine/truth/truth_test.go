package truth

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// run makes a result of n requests in one stage, each timed by the client
// as the server's figures plus the offsets.
func run(t *testing.T, recs []sim.TruthRecord, ttftOff, tpotOff time.Duration) *result.Result {
	t.Helper()
	col := metrics.NewCollector()
	col.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: len(recs), At: t0})
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for _, r := range recs {
		col.Sample(engine.Sample{Scenario: "s", Stage: "c1", Result: engine.Result{
			Start: r.Arrival, Status: 200, TTFT: ms(r.TTFTMS) + ttftOff, TPOT: ms(r.TPOTMS) + tpotOff,
			E2E: ms(r.E2EMS) + ttftOff, OutputTokens: r.Tokens, TokensSource: engine.TokensFromUsage,
		}})
	}
	col.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", At: t0.Add(time.Minute)})
	res := result.New(result.Meta{Start: t0, End: t0.Add(time.Minute)}, col.Close())
	res.Run.Process = &result.Process{CPUUserS: 0.3, CPUSystemS: 0.1, MaxRSSMB: 50}
	return res
}

// records are n streamed answers with TTFT 200 + i/10 ms, TPOT 10 ms, 64
// tokens, arriving during the run, plus a preflight before it and a 400.
func records(n int) []sim.TruthRecord {
	out := []sim.TruthRecord{{Arrival: t0.Add(-time.Second), Status: 200, Tokens: 1, TTFTMS: 5, E2EMS: 6, Complete: true}}
	for i := range n {
		ttft := 200 + float64(i)/10
		out = append(out, sim.TruthRecord{Arrival: t0.Add(time.Duration(i) * time.Millisecond), Status: 200, Tokens: 64,
			TTFTMS: ttft, TPOTMS: 10, E2EMS: ttft + 630, Complete: true})
	}
	return append(out, sim.TruthRecord{Arrival: t0.Add(time.Second), Status: 400, E2EMS: 0.1})
}

func TestCompare(t *testing.T) {
	recs := records(1000)
	res := run(t, recs[1:len(recs)-1], 2*time.Millisecond, 100*time.Microsecond)
	c, err := Compare(res, recs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Logged != 1002 || c.Matched != 1000 || c.Tokens != 64000 {
		t.Errorf("logged %d, matched %d, tokens %d; want 1002, 1000, 64000", c.Logged, c.Matched, c.Tokens)
	}
	want := map[string]float64{"ttft": 2, "tpot": 0.1, "e2e": 2}
	for _, r := range c.Rows {
		for i, q := range Quantiles {
			if got := r.Error(i); math.Abs(got-want[r.Metric]) > r.Resolution[i]+0.001 {
				t.Errorf("%s p%v: error %.3f ms, want %.3f ± %.3f", r.Metric, q, got, want[r.Metric], r.Resolution[i])
			}
		}
	}
	if got, want := c.CPUPerToken, time.Duration(0.4/64000*float64(time.Second)); got != want {
		t.Errorf("CPU per token %v, want %v", got, want)
	}
	var b strings.Builder
	if err := c.Text(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"1002 records, 1000 streamed answers", "TTFT", "1000/1000", "6.25 µs per token", "peak RSS 50 MB"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes %v, want none", c.Notes)
	}
}

func TestCompareCountsDiffer(t *testing.T) {
	recs := records(100)
	c, err := Compare(run(t, recs[1:50], 0, 0), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "llmload timed 49 first tokens, the server logged 100") {
		t.Errorf("notes %v", c.Notes)
	}
}

func TestCompareErrors(t *testing.T) {
	recs := records(10)
	res := run(t, recs[1:len(recs)-1], 0, 0)
	if _, err := Compare(res, recs[:1]); err == nil || !strings.Contains(err.Error(), "another run's log?") {
		t.Errorf("log of another run: %v", err)
	}
	empty := result.New(result.Meta{}, nil)
	if _, err := Compare(empty, recs); err == nil || !strings.Contains(err.Error(), "no stages") {
		t.Errorf("empty result: %v", err)
	}
	old := run(t, recs[1:len(recs)-1], 0, 0)
	old.Stages[0].TTFT.HDR = ""
	if _, err := Compare(old, recs); err == nil || !strings.Contains(err.Error(), "keeps no histogram") {
		t.Errorf("result without histograms: %v", err)
	}
}

func TestRead(t *testing.T) {
	good := `{"id":"a","arrival":"2026-12-01T10:00:00Z","status":200,"tokens":3,"ttft_ms":1.5,"tpot_ms":1,"e2e_ms":4,"complete":true}`
	recs, err := Read(strings.NewReader(good+"\n\n"+good+"\n"), "t.jsonl")
	if err != nil || len(recs) != 2 || recs[0].TTFTMS != 1.5 || !recs[1].Complete {
		t.Fatalf("Read = %+v, %v", recs, err)
	}
	for name, tt := range map[string]struct{ in, want string }{
		"empty":      {"", "t.jsonl: no records"},
		"not json":   {good + "\nhello\n", "t.jsonl:2: not a truth record"},
		"two values": {good + " {}\n", "t.jsonl:1: not a truth record: more than one JSON value"},
		"no arrival": {`{"status":200}`, "t.jsonl:1: record has no arrival time"},
		"negative":   {`{"arrival":"2026-12-01T10:00:00Z","ttft_ms":-1}`, "t.jsonl:1: ttft_ms -1 is not a duration"},
		"tokens":     {`{"arrival":"2026-12-01T10:00:00Z","tokens":-2}`, "t.jsonl:1: negative token count -2"},
		"cut short":  {good + "\n" + good[:40], "t.jsonl:2: not a truth record"},
		"too long":   {good + "\n" + strings.Repeat("x", maxLine+1), fmt.Sprintf("t.jsonl:2: line longer than %d KB", maxLine>>10)},
	} {
		_, err := Read(strings.NewReader(tt.in), "t.jsonl")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", name, err, tt.want)
		}
	}
}

// FuzzRead: any bytes are records or an error naming the file, never a
// panic.
func FuzzRead(f *testing.F) {
	f.Add(`{"id":"a","arrival":"2026-12-01T10:00:00Z","status":200,"tokens":3,"ttft_ms":1.5,"e2e_ms":4,"complete":true}` + "\n")
	f.Add("{}\n\n[]\n")
	f.Add(`{"arrival":"2026-12-01T10:00:00Z","ttft_ms":-1}`)
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := Read(strings.NewReader(in), "t.jsonl")
		if err != nil && !strings.HasPrefix(err.Error(), "t.jsonl") {
			t.Errorf("error %q does not name the file", err)
		}
		if err == nil && len(recs) == 0 {
			t.Error("no error and no records")
		}
	})
}
