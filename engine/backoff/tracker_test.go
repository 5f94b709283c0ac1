package backoff

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

func TestTrackerOutages(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type obs struct {
		ms int
		r  engine.Result
	}
	tests := []struct {
		name  string
		obs   []obs
		end   int // run end, ms
		want  []Outage
		count int64
	}{
		{name: "a lone reset", obs: []obs{{0, answered}, {100, reset}, {2000, answered}}, end: 3000},
		{name: "short gap of many refusals", obs: []obs{{0, refused}, {100, refused}, {200, refused}, {900, answered}}, end: 3000},
		{name: "two slow refusals", obs: []obs{{0, refused}, {1500, refused}, {1600, answered}}, end: 3000},
		{name: "recovered", obs: []obs{{0, answered}, {1000, refused}, {1500, reset}, {2500, refused}, {2600, canceled}, {3000, http503}, {3100, refused}},
			end: 9000, want: []Outage{{Start: at(1000), Last: at(2500), End: at(3000), Attempts: 3,
				Classes: map[string]int64{"conn_refused": 2, "conn_reset": 1}}}},
		{name: "never came back", obs: []obs{{0, answered}, {1000, refused}, {1100, refused}, {1300, refused}}, end: 2000,
			want: []Outage{{Start: at(1000), Last: at(1300), Attempts: 3, Classes: map[string]int64{"conn_refused": 3}}}},
		{name: "a stream cut off by the outage does not end it", obs: []obs{{0, answered}, {1000, refused},
			{1100, engine.Result{Start: at(500), TTFB: 100 * time.Millisecond, Status: 200, Err: &engine.Error{Class: engine.ErrStreamTruncated}}},
			{1300, refused}, {2500, refused}}, end: 3000,
			want: []Outage{{Start: at(1000), Last: at(2500), Attempts: 3, Classes: map[string]int64{"conn_refused": 3}}}},
		{name: "ends when the answer's headers came, not its last token", obs: []obs{{0, answered}, {1000, refused},
			{1500, refused}, {2500, refused},
			{4600, engine.Result{Start: at(2600), TTFB: 50 * time.Millisecond, Status: 200}}}, end: 9000,
			want: []Outage{{Start: at(1000), Last: at(2500), End: at(2650), Attempts: 3, Classes: map[string]int64{"conn_refused": 3}}}},
		{name: "a stalled link: requests sent into it get no headers", obs: []obs{{0, answered},
			{2000, engine.Result{Start: at(1000), Err: silent.Err}}, {2100, engine.Result{Start: at(1100), Err: silent.Err}},
			{2400, engine.Result{Start: at(1400), Err: silent.Err}}, {2500, engine.Result{Start: at(1500), Status: 200}}}, end: 9000,
			want: []Outage{{Start: at(1000), Last: at(2400), End: at(2500), Attempts: 3, Classes: map[string]int64{"timeout_ttft": 3}}}},
		{name: "slow first tokens after headers are no outage", obs: []obs{{0, answered}, {1000, slow}, {1500, slow}, {2500, slow}}, end: 3000},
		{name: "ended too soon after it began", obs: []obs{{1000, refused}, {1100, refused}, {1300, refused}}, end: 1500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			for _, o := range tt.obs {
				tr.Observe(&o.r, at(o.ms))
			}
			got := tr.Outages(at(tt.end))
			if len(got) != len(tt.want) {
				t.Fatalf("outages = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || !g.Last.Equal(w.Last) || g.Attempts != w.Attempts ||
					len(g.Classes) != len(w.Classes) {
					t.Errorf("outage %d = %+v, want %+v", i, g, w)
				}
				for k, v := range w.Classes {
					if g.Classes[k] != v {
						t.Errorf("outage %d: %s = %d, want %d", i, k, g.Classes[k], v)
					}
				}
			}
		})
	}
}

func TestOutageDuration(t *testing.T) {
	t0 := time.Unix(0, 0)
	o := Outage{Start: t0, Last: t0.Add(time.Second)}
	if got, want := o.Duration(t0.Add(5*time.Second)), 5*time.Second; got != want || o.Recovered() {
		t.Errorf("unrecovered: duration %v (recovered %v), want %v", got, o.Recovered(), want)
	}
	o.End = t0.Add(2 * time.Second)
	if got, want := o.Duration(t0.Add(5*time.Second)), 2*time.Second; got != want || !o.Recovered() {
		t.Errorf("recovered: duration %v, want %v", got, want)
	}
}
