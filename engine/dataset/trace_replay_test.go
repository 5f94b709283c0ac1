package dataset

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

const replayTrace = `{"timestamp": 0, "input_length": 1, "output_length": 1, "session_id": "b"}
{"timestamp": 100, "input_length": 1, "output_length": 1, "session_id": "a"}
{"timestamp": 200, "input_length": 1, "output_length": 1, "session_id": "b"}
{"timestamp": 300, "input_length": 1, "output_length": 1}
{"timestamp": 1000, "input_length": 1, "output_length": 1, "session_id": "c"}
`

func TestReplay(t *testing.T) {
	tr, _, err := loadTraceText(t, "r.jsonl", replayTrace, mooncake)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	arr := func(at time.Duration, rec, session int) plan.TraceArrival {
		return plan.TraceArrival{At: at, Record: rec, Session: session}
	}
	tests := []struct {
		name     string
		o        ReplayOptions
		want     []plan.TraceArrival
		sessions int
		speedup  float64
	}{
		{"all as recorded", ReplayOptions{}, []plan.TraceArrival{
			arr(0, 0, 0), arr(100*ms, 1, 0), arr(200*ms, 2, 0), arr(300*ms, 3, 0), arr(1000*ms, 4, 0)}, 0, 1},
		{"sessions in order of first appearance", ReplayOptions{Sessions: true}, []plan.TraceArrival{
			arr(0, 0, 1), arr(100*ms, 1, 2), arr(200*ms, 2, 1), arr(300*ms, 3, 0), arr(1000*ms, 4, 3)}, 3, 1},
		{"an offset re-bases to the first record kept", ReplayOptions{TimeOffset: 150 * ms, Sessions: true}, []plan.TraceArrival{
			arr(0, 2, 1), arr(100*ms, 3, 0), arr(800*ms, 4, 2)}, 2, 1},
		{"an offset on a record keeps it", ReplayOptions{TimeOffset: 1000 * ms}, []plan.TraceArrival{arr(0, 4, 0)}, 0, 1},
		{"a limit", ReplayOptions{Limit: 2, Sessions: true}, []plan.TraceArrival{arr(0, 0, 1), arr(100*ms, 1, 2)}, 2, 1},
		{"a limit past the end", ReplayOptions{TimeOffset: 250 * ms, Limit: 9}, []plan.TraceArrival{
			arr(0, 3, 0), arr(700*ms, 4, 0)}, 0, 1},
		{"twice as fast", ReplayOptions{Speedup: 2, Limit: 3}, []plan.TraceArrival{
			arr(0, 0, 0), arr(50*ms, 1, 0), arr(100*ms, 2, 0)}, 0, 2},
		{"at a third of the speed", ReplayOptions{Speedup: 1.0 / 3, TimeOffset: 200 * ms, Limit: 2}, []plan.TraceArrival{
			arr(0, 2, 0), arr(300*ms, 3, 0)}, 0, 1.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tr.Replay(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Arrivals, tt.want) {
				t.Errorf("arrivals:\n got %+v\nwant %+v", got.Arrivals, tt.want)
			}
			if got.Sessions != tt.sessions || got.Speedup != tt.speedup {
				t.Errorf("sessions = %d, speedup = %g; want %d, %g", got.Sessions, got.Speedup, tt.sessions, tt.speedup)
			}
			if want := tr.Path + " (mooncake)"; got.Source != want {
				t.Errorf("source = %q, want %q", got.Source, want)
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	tr, _, err := loadTraceText(t, "r.jsonl", replayTrace, mooncake)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		o    ReplayOptions
		want string
	}{
		{ReplayOptions{TimeOffset: 1001 * time.Millisecond}, "time_offset 1.001s is beyond the trace, which lasts 1s"},
		{ReplayOptions{TimeOffset: -time.Second}, "time_offset -1s: want 0 or more"},
		{ReplayOptions{Limit: -1}, "limit -1: want 0 (all records) or more"},
		{ReplayOptions{Speedup: -2}, "speedup -2: want a number above 0"},
		{ReplayOptions{Speedup: math.NaN()}, "speedup NaN: want a number above 0"},
		{ReplayOptions{Speedup: math.Inf(1)}, "speedup +Inf: want a number above 0"},
		{ReplayOptions{Speedup: 1e-300}, "at speedup 1e-300 the replay would last"},
	}
	for _, tt := range tests {
		if _, err := tr.Replay(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.o, err, tt.want)
		}
	}
	if _, err := (&Trace{}).Replay(ReplayOptions{}); err == nil {
		t.Error("a trace without records replayed")
	}
}

// The digest changes with the content, the format and every option, and
// only with them: a gzipped copy is the same trace.
func TestReplayDigest(t *testing.T) {
	load := func(name, content string, f TraceFormat) *Trace {
		tr, _, err := loadTraceText(t, name, content, f)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	digest := func(tr *Trace, o ReplayOptions) string {
		r, err := tr.Replay(o)
		if err != nil {
			t.Fatal(err)
		}
		return r.Digest
	}
	base := load("r.jsonl", replayTrace, mooncake)
	d := digest(base, ReplayOptions{})
	if len(d) != 16 || strings.Trim(d, "0123456789abcdef") != "" {
		t.Errorf("digest %q is not 16 hex digits", d)
	}
	if got := digest(load("other.jsonl", replayTrace, mooncake), ReplayOptions{}); got != d {
		t.Error("the same content under another name changed the digest")
	}
	if got := digest(load("r.jsonl.gz", replayTrace, mooncake), ReplayOptions{}); got != d {
		t.Error("the gzipped copy changed the digest")
	}
	if got := digest(base, ReplayOptions{Speedup: 1}); got != d {
		t.Error("speedup 1 spelled out changed the digest")
	}
	others := map[string]string{
		"content": digest(load("r.jsonl", replayTrace+"\n", mooncake), ReplayOptions{}),
		"format":  digest(load("r.jsonl", replayTrace, TraceFormat{Kind: TraceMooncake, BlockTokens: 16}), ReplayOptions{}),
		"offset":  digest(base, ReplayOptions{TimeOffset: time.Millisecond}),
		"limit":   digest(base, ReplayOptions{Limit: 5}),
		"speedup": digest(base, ReplayOptions{Speedup: 2}),
		"session": digest(base, ReplayOptions{Sessions: true}),
	}
	seen := map[string]string{d: "base"}
	for what, got := range others {
		if prev, dup := seen[got]; dup {
			t.Errorf("changing the %s gave the digest of %s", what, prev)
		}
		seen[got] = what
	}
}
