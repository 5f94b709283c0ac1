package capacity

import (
	"context"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// TestSearchFindsTheLimit runs the bracket and bisection against a server
// that holds every load up to limit: the estimate must bracket the limit
// within the precision (one VU for VUs), whatever side the start is on.
func TestSearchFindsTheLimit(t *testing.T) {
	tests := []struct {
		name                    string
		load                    string
		start, max, limit, prec float64
		wantLo, wantHi          float64 // 0: only check lo ≤ limit < hi
		atLeast                 bool
	}{
		{"vus from below", plan.CapacityVUs, 1, 64, 6, 0, 6, 7, false},
		{"vus from above", plan.CapacityVUs, 32, 64, 6, 0, 6, 7, false},
		{"vus held at max", plan.CapacityVUs, 1, 8, 100, 0, 8, 0, true},
		{"rate from below", plan.CapacityRate, 1, 1000, 41.5, 0.05, 0, 0, false},
		{"rate from above", plan.CapacityRate, 500, 1000, 41.5, 0.05, 0, 0, false},
		{"rate held at max", plan.CapacityRate, 1, 50, 100, 0.05, 50, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := plan.CapacitySearch{Load: tt.load, Start: tt.start, Max: tt.max, Growth: 2, Precision: tt.prec, Window: time.Second}
			s := NewSearch("cap", &cs)
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			var probes int
			s.Run(context.Background(), func(_ context.Context, load float64, phase string) (bool, string) {
				probes++
				s.Record(Probe{Scenario: "cap", Load: load, Phase: phase}, Verdict{Decided: true, Pass: load <= tt.limit})
				return load <= tt.limit, ""
			})
			o := s.Outcome()
			switch {
			case o.Stopped != "":
				t.Fatalf("stopped: %s", o.Stopped)
			case o.AtLeast != tt.atLeast:
				t.Fatalf("AtLeast = %v, want %v (lo %v, hi %v)", o.AtLeast, tt.atLeast, o.Lo, o.Hi)
			case len(o.Probes) != probes:
				t.Errorf("%d probes recorded, %d run", len(o.Probes), probes)
			}
			if tt.wantLo != 0 && (o.Lo != tt.wantLo || o.Hi != tt.wantHi) {
				t.Errorf("bracket [%v, %v], want [%v, %v]", o.Lo, o.Hi, tt.wantLo, tt.wantHi)
			}
			if !tt.atLeast && (o.Lo > tt.limit || o.Hi <= tt.limit || o.Capacity != (o.Lo+o.Hi)/2) {
				t.Errorf("bracket [%v, %v] capacity %v: want the limit %v inside", o.Lo, o.Hi, o.Capacity, tt.limit)
			}
			if tt.load == plan.CapacityRate && !tt.atLeast && (o.Hi-o.Lo)/o.Lo > tt.prec {
				t.Errorf("bracket [%v, %v] wider than %v", o.Lo, o.Hi, tt.prec)
			}
		})
	}
}

// TestSearchStops: a probe's stop ends the search with its reason and
// keeps what was decided before it; a search that never ran says so.
func TestSearchStops(t *testing.T) {
	cs := plan.CapacitySearch{Load: plan.CapacityVUs, Start: 1, Max: 64, Growth: 2, Window: time.Second}
	s := NewSearch("cap", &cs)
	if got := s.Outcome().Stopped; got != "the search did not start" {
		t.Errorf("before Run: Stopped = %q", got)
	}
	s.Run(context.Background(), func(_ context.Context, load float64, _ string) (bool, string) {
		if load >= 4 {
			return false, "client-bound"
		}
		return true, ""
	})
	if o := s.Outcome(); o.Stopped != "client-bound" || o.Lo != 2 || o.Hi != 0 || !o.AtLeast || o.Capacity != 2 {
		t.Errorf("outcome %+v: want stopped client-bound, held at 2", o)
	}
	s.Stop("interrupted")
	if got := s.Outcome().Stopped; got != "interrupted" {
		t.Errorf("after Stop: %q", got)
	}
}

func TestSearchCheck(t *testing.T) {
	ok := plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 10, Growth: 2, Precision: 0.1, Window: time.Second}
	tests := map[string]func(*plan.CapacitySearch){
		"load":      func(c *plan.CapacitySearch) { c.Load = "qps" },
		"start":     func(c *plan.CapacitySearch) { c.Start = 0 },
		"max":       func(c *plan.CapacitySearch) { c.Max = 0.5 },
		"growth":    func(c *plan.CapacitySearch) { c.Growth = 1 },
		"window":    func(c *plan.CapacitySearch) { c.Window = 0 },
		"precision": func(c *plan.CapacitySearch) { c.Precision = 0 },
	}
	if err := NewSearch("s", &ok).Check(); err != nil {
		t.Fatalf("valid search refused: %v", err)
	}
	for name, break_ := range tests {
		cs := ok
		break_(&cs)
		if err := NewSearch("s", &cs).Check(); err == nil {
			t.Errorf("%s: bad search accepted", name)
		}
	}
	if err := NewSearch("s", nil).Check(); err == nil {
		t.Error("a missing search accepted")
	}
}
