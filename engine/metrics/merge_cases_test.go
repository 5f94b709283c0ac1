package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// fixtureParts is two parts of the query fixture's run, fresh for each
// call so that a case may spoil them.
func fixtureParts(t *testing.T) []Part {
	t.Helper()
	parts := make([]*Collector, 2)
	for i := range parts {
		parts[i] = NewCollector()
		fixture(t, parts[i])
	}
	return partsOf(parts)
}

func TestMergeErrors(t *testing.T) {
	const junk = "HISTFAAAACl42pNpmSzMwMDAxQABzFCaEUzOmNZg/wEiKvKCQwMzE0fqWwcmFhYmZtZ4BmYWAA"
	for _, tc := range []struct {
		name  string
		spoil func([]Part) []Part
		hdr   bool   // the error also wraps ErrHDR
		says  string // in the message
	}{
		{"no parts", func([]Part) []Part { return nil }, false, "no parts"},
		{"no state", func(p []Part) []Part { p[1].State = nil; return p }, false, "part 1 has no state"},
		{"no summary", func(p []Part) []Part { p[0].Summary = nil; return p }, false, "part 0 has no summary"},
		{"corrupt histogram", func(p []Part) []Part {
			c := p[1].State.Stages[0].Cells["ttft"]
			c.Pos = junk
			p[1].State.Stages[0].Cells["ttft"] = c
			return p
		}, true, "part 1: stage open/s1: ttft"},
		{"histogram of another count", func(p []Part) []Part {
			c := p[1].State.Stages[0].Cells["e2e"]
			c.N++
			p[1].State.Stages[0].Cells["e2e"] = c
			return p
		}, true, "e2e"},
		{"latency histogram of custom geometry", func(p []Part) []Part {
			p[1].State.Stages[0].Cells["ttft"] = p[1].State.Stages[0].Custom["ratio"]
			return p
		}, true, "highest value"},
		{"corrupt custom histogram", func(p []Part) []Part {
			c := p[0].State.Stages[0].Custom["ratio"]
			c.Neg = "not base64!"
			p[0].State.Stages[0].Custom["ratio"] = c
			return p
		}, true, "ratio: negative values"},
		{"corrupt series histogram", func(p []Part) []Part {
			for i, c := range p[1].State.Series.TTFT {
				if c.N > 0 {
					c.Pos = junk
					p[1].State.Series.TTFT[i] = c
				}
			}
			return p
		}, true, "time series"},
		{"series without origin", func(p []Part) []Part { p[1].State.Series = nil; return p }, false, "points without an origin"},
		{"tag distribution without HDR", func(p []Part) []Part {
			ts := p[1].Summary.Stages[0].ByTag["prompt"]["short"]
			ts.TTFT.HDR = ""
			p[1].Summary.Stages[0].ByTag["prompt"]["short"] = ts
			return p
		}, false, "part 1: stage open/s1: tag prompt=short: ttft: no HDR"},
		{"metric of two kinds", func(p []Part) []Part { p[1].State.Kinds["ratio"] = engine.MetricCounter; return p }, false,
			`"ratio" is a trend in part 0 but a counter in part 1`},
		{"custom metric of no kind", func(p []Part) []Part {
			delete(p[0].State.Kinds, "bytes")
			delete(p[1].State.Kinds, "bytes")
			return p
		}, false, `"bytes" has no kind`},
		{"views differ", func(p []Part) []Part { p[1].State.Views = p[1].State.Views[1:]; return p }, false, "tracked different views"},
		{"views differ the other way", func(p []Part) []Part { p[0].State.Views = p[0].State.Views[1:]; return p }, false, "is in part 1 but not part 0"},
		{"slo in one part", func(p []Part) []Part { p[1].Summary.SLOSet = true; return p }, false, "part 1 has SLOSet true but part 0 false"},
		{"state of other stages", func(p []Part) []Part { p[1].State.Stages = p[1].State.Stages[1:]; return p }, false, "the state has 2 stages, the summary 3"},
		{"stage renamed", func(p []Part) []Part { p[0].State.Stages[1].Stage = "zz"; return p }, false,
			"part 0: the summary's stage closed/c1 (index 0) is not in the state"},
		{"stage twice", func(p []Part) []Part { p[0].State.Stages[1] = p[0].State.Stages[0]; return p }, false,
			"the state has stage open/s1 (index 0) twice"},
		{"unknown built-in metric", func(p []Part) []Part {
			p[0].State.Stages[0].Cells["ttft2"] = CellState{N: 1}
			return p
		}, false, `unknown built-in metric "ttft2"`},
		{"rate of more hits than values", func(p []Part) []Part {
			p[0].State.Stages[0].Checks["status 200"] = CellState{N: 1, Hits: 2}
			return p
		}, false, "impossible counts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Merge(tc.spoil(fixtureParts(t)))
			switch {
			case !errors.Is(err, ErrMerge):
				t.Fatalf("err = %v, want ErrMerge", err)
			case errors.Is(err, ErrHDR) != tc.hdr:
				t.Errorf("err = %v: wraps ErrHDR %v, want %v", err, !tc.hdr, tc.hdr)
			case !strings.Contains(err.Error(), tc.says):
				t.Errorf("err = %v, want it to say %q", err, tc.says)
			}
		})
	}
}

func TestStateBeforeClose(t *testing.T) {
	c := NewCollector()
	if st := c.State(); st != nil {
		t.Errorf("State before Close = %+v, want nil", st)
	}
	c.Close()
	if st := c.State(); st == nil || st.Series != nil || len(st.Stages) != 0 {
		t.Errorf("State of an empty run = %+v, want no stages, no series", st)
	}
}

// TestMergeStages: stages match by identity whatever parts lack them, in
// an order that keeps each part's; a stage is complete only when every
// part that ran it completed it, and its load is the parts' sum.
func TestMergeStages(t *testing.T) {
	a, b := NewCollector(), NewCollector()
	a.StageStarted(mark("sweep", "c1", 0, 2, 0))
	a.StageEnded(mark("sweep", "c1", 0, 2, 10))
	a.StageStarted(mark("sweep", "c4", 2, 3, 10))
	a.Sample(okSample("c4", 11, time.Second)) // c4 never ends here: interrupted
	b.StageStarted(mark("sweep", "c1", 0, 1, 0))
	b.StageEnded(mark("sweep", "c1", 0, 1, 10))
	b.StageStarted(mark("other", "x", 0, 1, 5))
	b.StageEnded(mark("other", "x", 0, 1, 8))
	b.StageStarted(mark("sweep", "c4", 2, 3, 10))
	b.Sample(okSample("c4", 12, time.Second))
	b.StageEnded(mark("sweep", "c4", 2, 3, 20))
	sum, snap, err := Merge(partsOf([]*Collector{a, b}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range sum.Stages {
		got = append(got, fmt.Sprintf("%s vus=%d complete=%v %.0fs", stageName(&st), st.VUs, st.Complete, st.DurationS))
	}
	if g, w := strings.Join(got, ", "), "sweep/c1 vus=3 complete=true 10s, other/x vus=1 complete=true 3s, sweep/c4 vus=6 complete=false 10s"; g != w {
		t.Errorf("stages = %s\nwant     %s", g, w)
	}
	if v, n, err := snap.Value(Query{Metric: "requests", Filter: Filter{"stage": "c4"}, Agg: AggRate}); err != nil || n != 2 || v != 0.2 {
		t.Errorf("c4 requests rate = %v (n %d, err %v), want 0.2 (n 2): two requests over the merged 10 s", v, n, err)
	}
}

// TestMergeSeriesAlign: a part whose origin is 1.4 s later has its
// seconds shifted by one; counts add, in-flight counts too.
func TestMergeSeriesAlign(t *testing.T) {
	pt := func(sec, starts, completions int64) Point {
		return Point{T: sec, Starts: starts, Completions: completions, OutputTokPerSec: 1.5}
	}
	part := func(origin time.Time, points ...Point) Part {
		return Part{Summary: &Summary{TimeSeries: points}, State: &State{Series: &SeriesState{Origin: origin}}}
	}
	sum, _, err := Merge([]Part{
		part(at(0), pt(0, 2, 0), pt(1, 0, 1), pt(2, 0, 1)),
		part(at(1.4), pt(-1, 1, 0), pt(0, 1, 1), pt(1, 0, 1)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range sum.TimeSeries {
		got = append(got, fmt.Sprintf("t%d %d/%d/%d %.1f", p.T, p.Starts, p.Completions, p.InFlight, p.OutputTokPerSec))
	}
	if g, w := strings.Join(got, ", "), "t0 3/0/3 3.0, t1 1/2/2 3.0, t2 0/2/0 3.0"; g != w {
		t.Errorf("series = %s, want %s", g, w)
	}
}

func TestMergeTally(t *testing.T) {
	var a, b []ScriptError
	for i := range 30 {
		a = append(a, ScriptError{Message: fmt.Sprintf("a%02d", i), Count: 1, First: i == 0})
		b = append(b, ScriptError{Message: fmt.Sprintf("b%02d", i), Count: 2})
	}
	b[0].First = true // the second part's first: not the merged one's
	b = append(b, ScriptError{Message: otherMessages, Count: 5})
	tl := mergeTally([][]ScriptError{a, b})
	list := tl.list()
	last := list[len(list)-1]
	if got, want := len(list), MaxScriptErrors+1; got != want {
		t.Errorf("%d entries, want %d", got, want)
	}
	if last.Message != otherMessages || last.Count != 5+10 {
		t.Errorf("last = %+v, want the other messages, 15 (5 + the 10 least frequent)", last)
	}
	for _, e := range list {
		if e.First != (e.Message == "a00") {
			t.Errorf("%s: First = %v, want only a00", e.Message, e.First)
		}
	}
}

// TestMergeTagCaps: the union of the parts' tag values and keys is folded
// to the caps a collector applies.
func TestMergeTagCaps(t *testing.T) {
	byTag := map[string]map[string]TagSummary{}
	for k := range MaxTagKeys + 3 {
		values := map[string]TagSummary{}
		for v := range MaxTagValues + 5 {
			values[fmt.Sprintf("v%02d", v)] = TagSummary{Requests: int64(100 - v), OK: int64(100 - v)}
		}
		byTag[fmt.Sprintf("k%02d", k)] = values
	}
	g := &group{parts: []int{0}, sums: []*StageSummary{{ByTag: byTag, TagKeysOverflow: 7}}}
	got, overflow, err := g.tags()
	if err != nil {
		t.Fatal(err)
	}
	perKey := int64(0)
	for v := range MaxTagValues + 5 {
		perKey += int64(100 - v)
	}
	if want := 7 + 3*perKey; overflow != want {
		t.Errorf("overflow = %d, want %d", overflow, want)
	}
	if len(got) != MaxTagKeys {
		t.Errorf("%d keys, want %d", len(got), MaxTagKeys)
	}
	values := got["k00"]
	if len(values) != MaxTagValues+1 || values[OtherTagValue].Requests != 80+79+78+77+76 || values["v00"].Requests != 100 {
		t.Errorf("k00: %d values, other %+v, v00 %+v; want %d, the 5 least requested, 100",
			len(values), values[OtherTagValue], values["v00"], MaxTagValues+1)
	}
}

func TestMergeDists(t *testing.T) {
	whole, halves := newRecorder(durationGeo), [2]recorder{newRecorder(durationGeo), newRecorder(durationGeo)}
	for i := range 3000 {
		d := time.Duration(1+i*i%9973) * 37 * time.Microsecond
		whole.record(d)
		halves[i%2].record(d)
	}
	want := whole.t.distWithHistogram()
	got, err := MergeDists(halves[0].t.distWithHistogram(), halves[1].t.dist(), Dist{})
	if err != nil {
		t.Fatal(err)
	}
	compareDist(t, "halves", want, got)
	for _, tc := range []struct {
		name string
		ds   []Dist
		ok   bool
	}{
		{"none", nil, true},
		{"empty ones", []Dist{{}, {Clamped: 1}}, true},
		{"no HDR", []Dist{want, {Count: 1, Min: 1, Max: 1, Mean: 1}}, false},
		{"HDR of another count", []Dist{{Count: 2, HDR: want.HDR}}, false},
	} {
		d, err := MergeDists(tc.ds...)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrMerge)) {
			t.Errorf("%s: err = %v, want ok %v (or ErrMerge)", tc.name, err, tc.ok)
		}
		if tc.ok && (d.Count != 0 || d.Clamped != int64(len(tc.ds)/2)) {
			t.Errorf("%s = %+v, want empty", tc.name, d)
		}
	}
}
