package executor

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// lateSink is a fakeSink whose StageEnded of the first stage holds the
// controller for delay: a busy machine waking it late.
type lateSink struct {
	*fakeSink
	delay time.Duration
}

func (s *lateSink) StageEnded(m engine.StageMark) {
	s.fakeSink.StageEnded(m)
	if m.Index == 0 {
		time.Sleep(s.delay)
	}
}

// A controller that runs late stamps the planned boundaries, not the
// moment it woke: no window is stretched and the next shortened. It says
// how late it was, and every iteration belongs to the window its start (or
// its schedule, in open models) falls in.
func TestStageMarksAreThePlannedBoundaries(t *testing.T) {
	const late = 50 * time.Millisecond
	closed := closedPlan(
		plan.Stage{Name: "first", Target: 1, Duration: time.Second},
		plan.Stage{Name: "second", Target: 3, Duration: time.Second},
	)
	open := openPlan(2, 2,
		plan.Stage{Name: "first", Rate: 100, Duration: time.Second},
		plan.Stage{Name: "second", Rate: 100, Duration: time.Second},
	)
	for name, p := range map[string]plan.Plan{"ramping-vus": closed, "ramping-arrival-rate": open} {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				sink := &lateSink{fakeSink: &fakeSink{}, delay: late}
				t0 := time.Now()
				if err := New(p, &fakeRunner{fn: sleepFn(10 * time.Millisecond)}, sink).Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				checkPlannedMarks(t, sink.fakeSink, t0, late)
			})
		})
	}
}

func checkPlannedMarks(t *testing.T, sink *fakeSink, t0 time.Time, late time.Duration) {
	t.Helper()
	if len(sink.started) != 2 || len(sink.ended) != 2 {
		t.Fatalf("marks: %d started, %d ended", len(sink.started), len(sink.ended))
	}
	windows := map[string][2]time.Time{}
	for i, want := range []struct{ start, end, lateStart time.Duration }{
		{0, time.Second, 0},
		{time.Second, 2 * time.Second, late},
	} {
		s, e := sink.started[i], sink.ended[i]
		if got := s.At.Sub(t0); got != want.start {
			t.Errorf("stage %d starts at %v, want %v", i, got, want.start)
		}
		if got := e.At.Sub(t0); got != want.end || e.Cut {
			t.Errorf("stage %d ends at %v (cut %v), want %v", i, got, e.Cut, want.end)
		}
		if got := s.Late; got != want.lateStart {
			t.Errorf("stage %d start mark late %v, want %v", i, got, want.lateStart)
		}
		windows[s.Stage] = [2]time.Time{s.At, e.At}
	}
	n := map[string]int{}
	for _, m := range sink.marks {
		at := m.Started
		if !m.Scheduled.IsZero() {
			at = m.Scheduled
		}
		// The last stage's iterations may start as it ends, in the
		// graceful-stop tail; no other window has a tail.
		w := windows[m.Stage]
		if at.Before(w[0]) || (!at.Before(w[1]) && m.Stage != "second") {
			t.Errorf("iteration of %s at %v, outside its window [%v, %v)", m.Stage, at.Sub(t0), w[0].Sub(t0), w[1].Sub(t0))
		}
		n[m.Stage]++
	}
	if n["first"] == 0 || n["second"] == 0 {
		t.Errorf("iterations per stage = %v", n)
	}
}
