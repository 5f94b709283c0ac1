package metrics

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// answer is a dirty request of kind in stage "sweep"/stage, answered with
// status and, when class is set, failed with that class and message.
func answer(stage, kind string, status int, class, msg string) engine.Sample {
	s := engine.Sample{Scenario: "sweep", Stage: stage, Dirty: kind, Result: engine.Result{
		Start: at(1), Status: status, TTFB: 5 * time.Millisecond, E2E: 6 * time.Millisecond,
	}}
	if class != "" {
		s.Err = &engine.Error{Class: class, Message: msg}
	}
	return s
}

// robustnessRun feeds two stages of dirty requests, one kind of each
// verdict, and returns the collector, already closed.
//
//	c1: empty     400 ×2 (handled)
//	    overlong  400 (handled), 500 (defect), no response: reset (defect)
//	    invisible 200 ×2 (accepted)
//	    bad_role  canceled
//	c2: overlong  400 (handled), 400 without a body (defect)
//	    bad_role  200 (accepted)
func robustnessRun(t *testing.T) (*Collector, *Summary) {
	t.Helper()
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.StageStarted(mark("sweep", "c2", 1, 2, 10))
	for _, s := range []engine.Sample{
		answer("c1", "empty", 400, "http_4xx:400", "messages must not be empty"),
		answer("c1", "empty", 400, "http_4xx:400", "messages must not be empty"),
		answer("c1", "overlong", 400, "http_4xx:400", "context length exceeded"),
		answer("c1", "overlong", 500, "http_5xx:500", "internal error"),
		answer("c1", "overlong", 0, engine.ErrConnReset, "connection reset by peer"),
		answer("c1", "invisible", 200, "", ""),
		answer("c1", "invisible", 200, "", ""),
		answer("c1", "bad_role", 0, engine.ErrCanceled, "context canceled"),
		answer("c2", "overlong", 400, "http_4xx:400", "too long"),
		answer("c2", "overlong", 400, "http_4xx:400", ""),
		answer("c2", "bad_role", 200, "", ""),
	} {
		c.Sample(s)
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	c.StageEnded(mark("sweep", "c2", 1, 2, 20))
	return c, c.Close()
}

func TestRobustnessTable(t *testing.T) {
	_, sum := robustnessRun(t)
	c1, c2 := findStage(t, sum, "c1"), findStage(t, sum, "c2")
	tests := []struct {
		name string
		got  RobustnessSummary
		want RobustnessSummary
	}{
		{"c1 empty", c1.Robustness["empty"], RobustnessSummary{Count: 2, Statuses: map[int]int64{400: 2},
			Errors: map[string]int64{"http_4xx:400": 2}, Handled: 2, Verdict: engine.VerdictHandled}},
		{"c1 overlong", c1.Robustness["overlong"], RobustnessSummary{Count: 3, Statuses: map[int]int64{400: 1, 500: 1, 0: 1},
			Errors:  map[string]int64{"http_4xx:400": 1, "http_5xx:500": 1, engine.ErrConnReset: 1},
			Handled: 1, Defects: 2, Verdict: engine.VerdictDefect}},
		{"c1 invisible", c1.Robustness["invisible"], RobustnessSummary{Count: 2, Statuses: map[int]int64{200: 2},
			Errors: map[string]int64{}, Accepted: 2, Verdict: engine.VerdictAccepted}},
		{"c1 bad_role", c1.Robustness["bad_role"], RobustnessSummary{Count: 1, Statuses: map[int]int64{0: 1},
			Errors: map[string]int64{engine.ErrCanceled: 1}, Canceled: 1, Verdict: engine.VerdictCanceled}},
		{"c2 overlong", c2.Robustness["overlong"], RobustnessSummary{Count: 2, Statuses: map[int]int64{400: 2},
			Errors: map[string]int64{"http_4xx:400": 2}, Handled: 1, Defects: 1, Verdict: engine.VerdictDefect}},
		{"run overlong", sum.Robustness["overlong"], RobustnessSummary{Count: 5, Statuses: map[int]int64{400: 3, 500: 1, 0: 1},
			Errors:  map[string]int64{"http_4xx:400": 3, "http_5xx:500": 1, engine.ErrConnReset: 1},
			Handled: 2, Defects: 3, Verdict: engine.VerdictDefect}},
		{"run bad_role", sum.Robustness["bad_role"], RobustnessSummary{Count: 2, Statuses: map[int]int64{0: 1, 200: 1},
			Errors: map[string]int64{engine.ErrCanceled: 1}, Accepted: 1, Canceled: 1, Verdict: engine.VerdictAccepted}},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
	if got, want := fmt.Sprint(len(c1.Robustness), len(c2.Robustness), len(sum.Robustness)), "4 2 4"; got != want {
		t.Errorf("kinds in c1, c2, run = %s, want %s", got, want)
	}
	if got, want := c1.DirtyRequests+c2.DirtyRequests, int64(11); got != want {
		t.Errorf("dirty requests = %d, want %d", got, want)
	}
	if got, want := strings.Join(DefectKinds(sum.Robustness), ","), "overlong"; got != want {
		t.Errorf("DefectKinds = %s, want %s", got, want)
	}
}

func TestRobustnessAbsentWithoutDirtyRequests(t *testing.T) {
	c := NewCollector()
	c.Sample(okSample("c1", 0, time.Second))
	sum := c.Close()
	if sum.Robustness != nil || sum.Stages[0].Robustness != nil {
		t.Errorf("robustness = %v / %v, want nil for a clean run", sum.Robustness, sum.Stages[0].Robustness)
	}
}

func TestKindVerdict(t *testing.T) {
	for _, tt := range []struct {
		handled, defects, accepted, canceled int64
		want                                 string
	}{
		{5, 1, 3, 1, engine.VerdictDefect},
		{5, 0, 3, 1, engine.VerdictAccepted},
		{5, 0, 0, 1, engine.VerdictHandled},
		{0, 0, 0, 2, engine.VerdictCanceled},
		{0, 1, 0, 0, engine.VerdictDefect},
	} {
		rs := RobustnessSummary{Handled: tt.handled, Defects: tt.defects, Accepted: tt.accepted, Canceled: tt.canceled}
		if got := rs.overall(); got != tt.want {
			t.Errorf("verdict of %+v = %q, want %q", tt, got, tt.want)
		}
	}
}

func TestDirtyMetricQueries(t *testing.T) {
	c, _ := robustnessRun(t)
	snap := c.Snapshot() // the final state, after Close
	tests := []struct {
		metric string
		f      Filter
		agg    string
		want   float64
		n      int64
	}{
		{"dirty.requests", nil, AggCount, 11, 11},
		{"dirty.defects", nil, AggCount, 3, 11},
		{"dirty.handled", nil, AggCount, 4, 11},
		{"dirty.accepted", nil, AggCount, 3, 11},
		{"dirty.defects", nil, AggRate, 3.0 / 20, 11}, // per second over 0-20 s
		{"dirty.defects", Filter{"stage": "c1"}, AggCount, 2, 8},
		{"dirty.defects", Filter{"stage": "c1"}, AggRate, 2.0 / 10, 8},
		{"dirty.defects", Filter{"kind": "overlong"}, AggCount, 3, 5},
		{"dirty.handled", Filter{"kind": "overlong", "stage": "c2"}, AggCount, 1, 2},
		{"dirty.accepted", Filter{"kind": "bad_role", "scenario": "sweep"}, AggCount, 1, 2},
		{"dirty.requests", Filter{"kind": "invisible"}, AggCount, 2, 2},
		{"dirty.defects", Filter{"kind": "empty"}, AggCount, 0, 2},
		{"dirty.defects", Filter{"kind": "nonexistent"}, AggCount, 0, 0},
		{"dirty.defects", Filter{"stage": "c3"}, AggCount, 0, 0},
	}
	for _, tt := range tests {
		v, n, err := snap.Value(Query{Metric: tt.metric, Filter: tt.f, Agg: tt.agg})
		if err != nil {
			t.Errorf("%s%v.%s: %v", tt.metric, tt.f, tt.agg, err)
			continue
		}
		if v != tt.want || n != tt.n {
			t.Errorf("%s%v.%s = %v (n %d), want %v (n %d)", tt.metric, tt.f, tt.agg, v, n, tt.want, tt.n)
		}
	}
	if _, _, err := snap.Value(Query{Metric: "dirty.defects", Agg: AggP, P: 99}); err == nil {
		t.Error("dirty.defects.p99 answered; want an error: it is a counter")
	}
}

func TestDirtyMetricTrack(t *testing.T) {
	c := NewCollector()
	defer c.Close()
	for _, tt := range []struct {
		f       Filter
		wantErr string
	}{
		{Filter{"kind": "overlong"}, ""},
		{Filter{"kind": "overlong", "stage": "c1"}, ""},
		{Filter{"prompt": "short"}, "dirty.defects carries no tags, only scenario, stage and kind"},
	} {
		err := c.Track("dirty.defects", tt.f)
		if got := fmt.Sprint(err); (tt.wantErr == "" && err != nil) || !strings.Contains(got, tt.wantErr) {
			t.Errorf("Track(dirty.defects, %v) = %v, want %q", tt.f, err, tt.wantErr)
		}
	}
	// A kind filter on a clean metric is a user tag, as before.
	if _, _, err := c.Snapshot().Value(Query{Metric: "requests", Filter: Filter{"kind": "x"}, Agg: AggCount}); err == nil {
		t.Error("requests{kind:x} answered without Track; want the not-tracked error")
	}
}

func TestDirtyKindsCapped(t *testing.T) {
	c := NewCollector()
	for i := range MaxDirtyKinds + 5 {
		c.Sample(answer("c1", fmt.Sprintf("k%03d", i), 400, "http_4xx:400", "bad"))
	}
	sum := c.Close()
	r := sum.Stages[0].Robustness
	if got, want := len(r), MaxDirtyKinds+1; got != want {
		t.Errorf("%d kinds kept, want %d", got, want)
	}
	if got, want := r[OtherDirtyKind].Count, int64(5); got != want {
		t.Errorf("%s count = %d, want %d", OtherDirtyKind, got, want)
	}
	var total int64
	for rs := range maps.Values(r) {
		total += rs.Count
	}
	if got, want := total, int64(MaxDirtyKinds+5); got != want {
		t.Errorf("requests over all kinds = %d, want %d", got, want)
	}
}

// TestAggregatorAllocsDirty: counting a dirty request allocates nothing
// once its stage, kind, status and class have been seen.
func TestAggregatorAllocsDirty(t *testing.T) {
	a := newAggregator()
	for _, s := range []engine.Sample{
		answer("c1", "overlong", 500, "http_5xx:500", "boom"),
		answer("c1", "invisible", 200, "", ""),
	} {
		e := dirtyEvent(&s)
		a.add(&e)
		if got := testing.AllocsPerRun(100, func() { a.add(&e) }); got != 0 {
			t.Errorf("%s: %v allocs per add, want 0", s.Dirty, got)
		}
	}
}
