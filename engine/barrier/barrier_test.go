package barrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// config is segment i of n at dir, with a plan of seed 1.
func config(dir string, i, n int) Config {
	parts := plan.Parts{Script: strings.Repeat("ab", 32), Seed: 1, Shape: map[string]string{"scenarios": "x"}}
	return Config{Dir: dir, Index: i, Count: n, Fingerprint: parts.Fingerprint(), Parts: &parts, Host: fmt.Sprintf("host-%d", i)}
}

// outcome is one Wait's return, and when it returned.
type outcome struct {
	start, at time.Time
	err       error
}

// waitAll runs Wait for each config after its delay, and returns each
// one's outcome.
func waitAll(ctx context.Context, cfgs []Config, delays []time.Duration) []outcome {
	out := make([]outcome, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Go(func() {
			time.Sleep(delays[i])
			start, err := Wait(ctx, c)
			out[i] = outcome{start, time.Now(), err}
		})
	}
	wg.Wait()
	return out
}

// Every segment computes the one start instant, the latest ready time
// plus the lead rounded up to 100 ms, and returns before it.
func TestWaitStartsEverySegmentAtOneInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "made", "here")
		t0 := time.Now()
		cfgs := []Config{config(dir, 0, 3), config(dir, 1, 3), config(dir, 2, 3)}
		delays := []time.Duration{0, time.Second, 3*time.Second + 30*time.Millisecond}
		out := waitAll(t.Context(), cfgs, delays)
		want := t0.Add(3*time.Second + 30*time.Millisecond + DefaultLead).Truncate(Round).Add(Round)
		for i, o := range out {
			if o.err != nil {
				t.Fatalf("segment %d: %v", i, o.err)
			}
			if !o.start.Equal(want) {
				t.Errorf("segment %d starts at %v, want %v", i, o.start.Sub(t0), want.Sub(t0))
			}
			if !o.at.Before(o.start) {
				t.Errorf("segment %d returned at %v, not before the start %v", i, o.at.Sub(t0), o.start.Sub(t0))
			}
		}
	})
}

// After the timeout a waiting segment fails naming who never came and
// writes its abort file; the others then fail at once, naming it.
func TestWaitTimesOutAndAbortsTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		t0 := time.Now()
		cfgs := []Config{config(dir, 0, 4), config(dir, 1, 4)}
		for i := range cfgs {
			cfgs[i].Timeout = time.Minute
		}
		out := waitAll(t.Context(), cfgs, []time.Duration{0, 10 * time.Second})
		if err := out[0].err; err == nil || !strings.Contains(err.Error(), "segments 2 and 3 were not ready within 1m0s (ready: 0, 1)") {
			t.Errorf("segment 0: %v", err)
		}
		if got := out[0].at.Sub(t0); got < time.Minute || got > time.Minute+DefaultPoll {
			t.Errorf("segment 0 gave up after %v, want its timeout of 1m", got)
		}
		if err := out[1].err; err == nil || !strings.Contains(err.Error(), "segment 0 (on host-0) gave up: segments 2 and 3 were not ready") {
			t.Errorf("segment 1: %v", err)
		}
		if got := out[1].at.Sub(out[0].at); got > DefaultPoll {
			t.Errorf("segment 1 stopped %v after segment 0's abort, want within a poll", got)
		}
		ab, err := Aborted(dir)
		if err != nil || len(ab) != 1 || ab[0].Index != 0 || !strings.Contains(ab[0].Reason, "segments 2 and 3") {
			t.Errorf("Aborted = %+v, %v", ab, err)
		}
	})
}

// A ready file that does not belong with this segment fails the wait at
// once, naming the segment and what differs.
func TestWaitRefusesAnotherPlan(t *testing.T) {
	other := func(mod func(*Ready)) Ready {
		c := config("", 1, 2)
		r := Ready{Index: 1, Count: 2, ReadyAt: time.Now().UTC(), Plan: c.Fingerprint, PlanParts: c.Parts, Host: "b"}
		mod(&r)
		return r
	}
	tests := []struct {
		name  string
		ready Ready
		want  string
	}{
		{"seed", other(func(r *Ready) {
			p := *r.PlanParts
			p.Seed = 2
			r.PlanParts, r.Plan = &p, p.Fingerprint()
		}), "segment 1 (on b) and this segment (0/2) differ in the seed (2 and 1)"},
		{"old file without parts", other(func(r *Ready) { r.PlanParts, r.Plan = nil, "f00" }), "differ in the plan fingerprint (f00 and "},
		{"count", other(func(r *Ready) { r.Count = 3 }), "segment 1 (on b) is one of 3 segments, this one (0/2) of 2"},
		{"index", other(func(r *Ready) { r.Index = 0 }), "says index 0 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				if err := writeJSON(dir, readyName(1), tt.ready); err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				_, err := Wait(t.Context(), config(dir, 0, 2))
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				if time.Since(t0) != 0 {
					t.Errorf("failed after %v, want at once", time.Since(t0))
				}
			})
		})
	}
}

// A segment that finds every ready file there already joins while the
// start is at most the lead past, without rewriting its own; later it
// refuses to run.
func TestWaitArrivingAfterTheOthers(t *testing.T) {
	tests := []struct {
		name  string
		ago   time.Duration // since the last ready time
		late  bool
		delay time.Duration // from now to the start
	}{
		{"start ahead", time.Second, false, time.Second},
		{"start just passed", 3 * time.Second, false, -time.Second},
		{"start long passed", time.Minute, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				// The bubble's clock starts on a whole second: half a
				// round off it, the start is rounded up to the second.
				at := time.Now().Add(-tt.ago - Round/2).UTC()
				for i := range 3 {
					c := config(dir, i, 3)
					if err := writeJSON(dir, readyName(i), Ready{Index: i, Count: 3, ReadyAt: at, Plan: c.Fingerprint, PlanParts: c.Parts}); err != nil {
						t.Fatal(err)
					}
				}
				before, _ := os.ReadFile(filepath.Join(dir, readyName(2)))
				start, err := Wait(t.Context(), config(dir, 2, 3))
				after, _ := os.ReadFile(filepath.Join(dir, readyName(2)))
				if string(before) != string(after) {
					t.Errorf("the earlier ready file was rewritten:\n%s\n%s", before, after)
				}
				if tt.late {
					if err == nil || !strings.Contains(err.Error(), "arrived too late") || !strings.Contains(err.Error(), "new --barrier directory") {
						t.Errorf("err = %v, want a late arrival", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := start.Sub(time.Now()); got != tt.delay {
					t.Errorf("start in %v, want %v", got, tt.delay)
				}
			})
		})
	}
}

// An interrupt ends the wait with ctx's error; the wait says at most every
// 10 s how many segments are ready.
func TestWaitInterruptedAndItsLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(35*time.Second, cancel)
		var lines []string
		cfg := config(dir, 1, 3)
		cfg.Log = func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
		_, err := Wait(ctx, cfg)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if len(lines) != 4 || !strings.Contains(lines[0], "1 of 3 segments ready, waiting for 0 and 2") {
			t.Errorf("%d log lines over 35 s, want 4 (at 0, 10, 20 and 30 s):\n%s", len(lines), strings.Join(lines, "\n"))
		}
	})
}

// The ready file is whole JSON with an RFC 3339 nanosecond time, and no
// temporary file is left beside it.
func TestReadyFileIsWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cfg := config(dir, 0, 2)
	cfg.Log = func(string, ...any) { cancel() }
	if _, err := Wait(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "ready-0" {
		t.Fatalf("directory holds %v, want only ready-0", entries)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ready-0"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	at, _ := raw["ready_at"].(string)
	if _, err := time.Parse(time.RFC3339Nano, at); err != nil || raw["index"] != 0.0 || raw["count"] != 2.0 ||
		raw["plan"] != cfg.Fingerprint || raw["host"] != "host-0" {
		t.Errorf("ready-0 = %s", b)
	}
}

func TestRoundUp(t *testing.T) {
	base := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	tests := []struct{ in, want time.Duration }{
		{0, 0},
		{time.Nanosecond, Round},
		{2*time.Second + 30*time.Millisecond, 2*time.Second + Round},
		{2*time.Second + Round, 2*time.Second + Round},
	}
	for _, tt := range tests {
		if got := roundUp(base.Add(tt.in), Round); !got.Equal(base.Add(tt.want)) {
			t.Errorf("roundUp(+%v) = +%v, want +%v", tt.in, got.Sub(base), tt.want)
		}
	}
}

func TestFileIndex(t *testing.T) {
	tests := []struct {
		name string
		kind string
		i    int
		ok   bool
	}{
		{"ready-0", "ready", 0, true},
		{"abort-12", "abort", 12, true},
		{".ready-0-123.tmp", "", 0, false},
		{"ready-01", "", 0, false},
		{"ready--1", "", 0, false},
		{"seg-0.json", "", 0, false},
	}
	for _, tt := range tests {
		kind, i, ok := fileIndex(tt.name)
		if kind != tt.kind || i != tt.i || ok != tt.ok {
			t.Errorf("fileIndex(%q) = %q, %d, %v", tt.name, kind, i, ok)
		}
	}
}

func TestAbortedWithoutADirectory(t *testing.T) {
	ab, err := Aborted(filepath.Join(t.TempDir(), "none"))
	if err != nil || ab != nil {
		t.Errorf("Aborted = %v, %v", ab, err)
	}
}
