package metrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMergeExact is the proof of exactness: n segments, each fed a
// disjoint share of one seeded run with its own skewed stage marks,
// merge into what one collector fed the whole run reports and answers.
func TestMergeExact(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			whole, segs := mergeRun(t, 42, n)
			parts := partsOf(segs)
			for i, p := range parts {
				if p.Summary.Stages[0].Requests == 0 {
					t.Fatalf("part %d got no request: the test proves nothing", i)
				}
			}
			sum, snap, err := Merge(parts)
			if err != nil {
				t.Fatal(err)
			}
			compareSummaries(t, whole.Close(), sum)
			compareQueries(t, whole.Snapshot(), snap)
			if n == 1 && !reflect.DeepEqual(sum, parts[0].Summary) {
				t.Error("one part does not merge into its own summary, bit for bit")
			}
		})
	}
}

// TestMergeJSON merges parts that went through JSON as result files
// carry them, their stages in a result file's order (by scenario, then
// index): still exact.
func TestMergeJSON(t *testing.T) {
	whole, segs := mergeRun(t, 7, 4)
	parts := partsOf(segs)
	for i := range parts {
		parts[i] = roundTrip(t, parts[i])
		byScenario(parts[i].Summary)
	}
	sum, snap, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	want := *whole.Close()
	want.Stages = slices.Clone(want.Stages)
	byScenario(&want)
	compareSummaries(t, &want, sum)
	compareQueries(t, whole.Snapshot(), snap)
}

// byScenario orders the stages as report.New does.
func byScenario(s *Summary) {
	slices.SortStableFunc(s.Stages, func(a, b StageSummary) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), a.Index-b.Index)
	})
}

func roundTrip(t *testing.T, p Part) Part {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out Part
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mergeQueries are threshold queries of every kind, filter and
// aggregation, views included.
var mergeQueries = []Query{
	{Metric: "ttft", Agg: AggP, P: 99},
	{Metric: "ttft", Filter: Filter{"stage": "s2"}, Agg: AggP, P: 95},
	{Metric: "ttft", Filter: Filter{"prompt": "short"}, Agg: AggP, P: 90},
	{Metric: "ttft", Filter: Filter{"prompt": "short"}, Agg: AggAvg},
	{Metric: "e2e", Filter: Filter{"prompt": "long", "scenario": "open"}, Agg: AggMed},
	{Metric: "e2e", Agg: AggMax},
	{Metric: "tpot", Agg: AggMin},
	{Metric: "itl", Filter: Filter{"scenario": "closed"}, Agg: AggP, P: 99.9},
	{Metric: "schedule_lag", Agg: AggP, P: 99},
	{Metric: "ttft_sched", Agg: AggP, P: 50},
	{Metric: "requests", Filter: Filter{"prompt": "short"}, Agg: AggCount},
	{Metric: "requests", Filter: Filter{"prompt": "short"}, Agg: AggRate},
	{Metric: "output_tokens", Filter: Filter{"prompt": "short"}, Agg: AggRate},
	{Metric: "requests", Filter: Filter{"stage": "s1"}, Agg: AggRate},
	{Metric: "iterations", Filter: Filter{"scenario": "open"}, Agg: AggRate},
	{Metric: "dropped_iterations", Agg: AggCount},
	{Metric: "iteration_errors", Agg: AggCount},
	{Metric: "checks", Agg: AggRate},
	{Metric: "checks", Filter: Filter{"check": "has text"}, Agg: AggRate},
	{Metric: "checks", Filter: Filter{"check": "status 200", "prompt": "short"}, Agg: AggCount},
	{Metric: "errors", Agg: AggRate},
	{Metric: "errors", Filter: Filter{"prompt": "long"}, Agg: AggRate},
	{Metric: "goodput", Agg: AggCount},
	{Metric: "good_share", Agg: AggRate},
	{Metric: "ratio", Agg: AggP, P: 90},
	{Metric: "ratio", Agg: AggP, P: 5},
	{Metric: "ratio", Filter: Filter{"region": "eu"}, Agg: AggMin},
	{Metric: "ratio", Filter: Filter{"region": "eu"}, Agg: AggAvg},
	{Metric: "bytes", Agg: AggCount},
	{Metric: "bytes", Agg: AggRate},
	{Metric: "bytes", Filter: Filter{"stage": "c1"}, Agg: AggRate},
	{Metric: "hit", Agg: AggRate},
	{Metric: "unused", Agg: AggCount},
	{Metric: "dirty.requests", Agg: AggCount},
	{Metric: "dirty.defects", Filter: Filter{"kind": "empty"}, Agg: AggCount},
	{Metric: "dirty.handled", Filter: Filter{"kind": "overlong", "scenario": "closed"}, Agg: AggRate},
	{Metric: "task", Agg: AggP, P: 99},
	{Metric: "task", Filter: Filter{"task": "plan"}, Agg: AggP, P: 90},
	{Metric: "tasks", Agg: AggRate},
	{Metric: "task_good", Agg: AggRate},
	{Metric: "task_good", Filter: Filter{"task": "work"}, Agg: AggCount},
	{Metric: "task_failed", Filter: Filter{"stage": "s2"}, Agg: AggRate},
	{Metric: "task_calls", Agg: AggAvg},
	{Metric: "task_tool", Agg: AggMax},
}

func compareQueries(t *testing.T, want, got *Snapshot) {
	t.Helper()
	for _, q := range mergeQueries {
		name := viewKey(q.Metric, q.Filter) + "." + q.Agg + fmt.Sprint(q.P)
		wv, wn, werr := want.Value(q)
		gv, gn, gerr := got.Value(q)
		if werr != nil || gerr != nil {
			t.Errorf("%s: errors %v, %v", name, werr, gerr)
			continue
		}
		if wn != gn || (wn == 0 && q.Metric != "unused") {
			t.Errorf("%s: n = %d, want %d (> 0)", name, gn, wn)
		}
		kind, _ := want.Kind(q.Metric)
		if !closeValue(kind, q.Agg, wv, gv) {
			t.Errorf("%s = %v, want %v", name, gv, wv)
		}
	}
}

// closeValue compares a query's answers: percentiles to HDR precision,
// means to a microsecond, a counter's rate per second to the segments'
// skew (its window is theirs), everything else exactly.
func closeValue(kind, agg string, want, got float64) bool {
	switch {
	case agg == AggP || agg == AggMed:
		return sameBucket(want, got)
	case agg == AggAvg:
		return math.Abs(want-got) <= 1e-3+1e-9
	case agg == AggRate && kind == "counter":
		return relClose(want, got, 1e-3)
	}
	return want == got
}

// sameBucket reports whether two values read from histograms (ms, or
// custom units, both 0.001 a tick) fall in one HDR bucket.
func sameBucket(a, b float64) bool {
	if a == b {
		return true
	}
	ta, tb := int64(math.Round(math.Abs(a)*1000)), int64(math.Round(math.Abs(b)*1000))
	return (a < 0) == (b < 0) && HDRBucketAt(ta) == HDRBucketAt(tb)
}

func relClose(want, got, rel float64) bool {
	return math.Abs(want-got) <= rel*math.Max(math.Abs(want), 1e-9)
}

func compareSummaries(t *testing.T, want, got *Summary) {
	t.Helper()
	if len(want.Stages) != len(got.Stages) {
		t.Fatalf("%d stages, want %d", len(got.Stages), len(want.Stages))
	}
	for i := range want.Stages {
		compareStage(t, &want.Stages[i], &got.Stages[i])
	}
	compareSeries(t, want.TimeSeries, got.TimeSeries)
	compareMetrics(t, "run", want.Metrics, got.Metrics)
	w, g := *want, *got
	compareFirst(t, w.ScriptErrors, g.ScriptErrors)
	w.Stages, g.Stages, w.TimeSeries, g.TimeSeries, w.Metrics, g.Metrics = nil, nil, nil, nil, nil, nil
	w.ScriptErrors, g.ScriptErrors = withoutFirst(w.ScriptErrors), withoutFirst(g.ScriptErrors)
	diffFields(t, "summary", w, g)
}

// compareFirst checks that exactly one script error is First, as in the
// whole run's summary. (Which one depends on the segment that raised the
// first: Merge takes the first part's.)
func compareFirst(t *testing.T, want, got []ScriptError) {
	t.Helper()
	count := func(l []ScriptError) (n int) {
		for _, e := range l {
			if e.First {
				n++
			}
		}
		return n
	}
	if w, g := count(want), count(got); w != g {
		t.Errorf("%d script errors First, want %d", g, w)
	}
}

func withoutFirst(l []ScriptError) []ScriptError {
	l = slices.Clone(l)
	for i := range l {
		l[i].First = false
	}
	return l
}

func compareStage(t *testing.T, want, got *StageSummary) {
	t.Helper()
	name := stageName(want)
	if stageName(got) != name {
		t.Fatalf("stage %s, want %s", stageName(got), name)
	}
	if d := got.Start.Sub(want.Start).Abs() + got.End.Sub(want.End).Abs(); d > 10*time.Millisecond {
		t.Errorf("%s: window %v-%v, want %v-%v", name, got.Start, got.End, want.Start, want.End)
	}
	compareRates(t, name, want, got)
	for _, l := range latencyNames {
		wd, _ := want.Latency(l)
		gd, _ := got.Latency(l)
		compareDist(t, name+" "+l, wd, gd)
	}
	compareTags(t, name, want.ByTag, got.ByTag)
	compareTags(t, name+" by api", map[string]map[string]TagSummary{"api": want.ByAPI}, map[string]map[string]TagSummary{"api": got.ByAPI})
	compareTargets(t, name, want.ByTarget, got.ByTarget)
	compareMedia(t, name, want.Media, got.Media)
	compareTasks(t, name, want.Tasks, got.Tasks)
	compareMetrics(t, name, want.Metrics, got.Metrics)
	if !relClose(want.TokenCheck.MeanRelDiff, got.TokenCheck.MeanRelDiff, 1e-12) {
		t.Errorf("%s: token check mean = %v, want %v", name, got.TokenCheck.MeanRelDiff, want.TokenCheck.MeanRelDiff)
	}
	w, g := *want, *got
	for _, s := range []*StageSummary{&w, &g} {
		s.Start, s.End, s.DurationS, s.ByTag, s.ByAPI, s.ByTarget, s.Metrics = time.Time{}, time.Time{}, 0, nil, nil, nil, nil
		s.Media, s.Tasks = nil, nil
		s.ReqPerSec, s.OutputTokPerSec, s.InputTokPerSec, s.Goodput, s.AchievedRate, s.ScheduledRate = 0, 0, 0, 0, 0, 0
		s.InputsPerSec = 0
		s.TokenCheck.MeanRelDiff = 0
		s.TLS = Dist{}
		s.TTFB, s.Connect, s.TTFT, s.TTFC, s.TPOT, s.ITL, s.ITLToken, s.E2E = Dist{}, Dist{}, Dist{}, Dist{}, Dist{}, Dist{}, Dist{}, Dist{}
		s.ScheduleLag, s.TTFTSched, s.E2ESched = Dist{}, Dist{}, Dist{}
	}
	diffFields(t, name, w, g)
}

// compareMedia checks the media figures: counts exact, distributions
// as compareDist, rates within the windows' skew.
func compareMedia(t *testing.T, name string, want, got *MediaSummary) {
	t.Helper()
	if (want == nil) != (got == nil) {
		t.Fatalf("%s: media %v, want %v", name, got, want)
	}
	if want == nil {
		return
	}
	w, g := *want, *got
	for _, d := range []struct {
		name      string
		want, got *Dist
	}{
		{"encode", &w.Encode, &g.Encode}, {"upload", &w.Upload, &g.Upload},
		{"tokens/image", &w.TokensPerImageDist, &g.TokensPerImageDist},
		{"rtf", &w.RTF, &g.RTF}, {"audio bytes/s", &w.AudioBytesPerSec, &g.AudioBytesPerSec},
	} {
		compareDist(t, name+" media "+d.name, *d.want, *d.got)
		*d.want, *d.got = Dist{}, Dist{}
	}
	for _, r := range []struct {
		name      string
		want, got *float64
	}{
		{"MB/s", &w.BodyMBPerSec, &g.BodyMBPerSec}, {"images/s", &w.ImagesPerSec, &g.ImagesPerSec},
		{"audio in s/s", &w.AudioInSPerSec, &g.AudioInSPerSec}, {"audio out s/s", &w.AudioOutSPerSec, &g.AudioOutSPerSec},
	} {
		if !relClose(*r.want, *r.got, 2e-3) {
			t.Errorf("%s: media %s = %v, want %v", name, r.name, *r.got, *r.want)
		}
		*r.want, *r.got = 0, 0
	}
	diffFields(t, name+" media", w, g)
}

// compareTasks checks the task figures: counts exact, distributions as
// compareDist, rates within the windows' skew, the errors whatever their
// order (the parts do not say which came first in time).
func compareTasks(t *testing.T, name string, want, got *TaskSummary) {
	t.Helper()
	if (want == nil) != (got == nil) {
		t.Fatalf("%s: tasks %v, want %v", name, got, want)
	}
	if want == nil {
		return
	}
	w, g := *want, *got
	for _, d := range []struct {
		name      string
		want, got *Dist
	}{
		{"duration", &w.Duration, &g.Duration}, {"calls", &w.Calls, &g.Calls},
		{"output tokens", &w.OutputTokens, &g.OutputTokens}, {"tool", &w.Tool, &g.Tool},
	} {
		compareDist(t, name+" tasks "+d.name, *d.want, *d.got)
		*d.want, *d.got = Dist{}, Dist{}
	}
	for _, r := range []struct {
		name      string
		want, got *float64
	}{{"tasks/s", &w.TasksPerSec, &g.TasksPerSec}, {"goodput", &w.Goodput, &g.Goodput}} {
		if !relClose(*r.want, *r.got, 2e-3) {
			t.Errorf("%s: tasks %s = %v, want %v", name, r.name, *r.got, *r.want)
		}
		*r.want, *r.got = 0, 0
	}
	if !slices.Equal(slices.Sorted(maps.Keys(w.ByName)), slices.Sorted(maps.Keys(g.ByName))) {
		t.Errorf("%s: task names %v, want %v", name, slices.Sorted(maps.Keys(g.ByName)), slices.Sorted(maps.Keys(w.ByName)))
	}
	for n, wn := range w.ByName {
		gn := g.ByName[n]
		compareDist(t, name+" task "+n, wn.Duration, gn.Duration)
		wn.Duration, gn.Duration = Dist{}, Dist{}
		diffFields(t, name+" task "+n, wn, gn)
	}
	byMessage := func(a, b TaskError) int { return strings.Compare(a.Message, b.Message) }
	w.Errors, g.Errors = slices.SortedFunc(slices.Values(w.Errors), byMessage), slices.SortedFunc(slices.Values(g.Errors), byMessage)
	w.ByName, g.ByName = nil, nil
	diffFields(t, name+" tasks", w, g)
}

var latencyNames = []string{"ttfb", "connect", "tls", "ttft", "ttfc", "tpot", "itl", "itl_token", "e2e", "schedule_lag", "ttft_sched", "e2e_sched"}

// compareRates checks that every rate is computed again from the merged
// counts over the merged window, and so within the skew of the whole's.
func compareRates(t *testing.T, name string, want, got *StageSummary) {
	t.Helper()
	secs := got.DurationS
	for _, r := range []struct {
		rate          string
		got, of, want float64
	}{
		{"req/s", got.ReqPerSec, float64(got.WindowRequests()), want.ReqPerSec},
		{"output tok/s", got.OutputTokPerSec, float64(got.WindowOutputTokens()), want.OutputTokPerSec},
		{"input tok/s", got.InputTokPerSec, float64(got.InputTokens - got.TailInputTokens), want.InputTokPerSec},
		{"inputs/s", got.InputsPerSec, float64(got.Inputs) - tailInputs(got), want.InputsPerSec},
		{"goodput", got.Goodput, float64(got.WindowGoodRequests()), want.Goodput},
		{"achieved", got.AchievedRate, float64(got.Iterations - got.TailIterations), want.AchievedRate},
		{"scheduled", got.ScheduledRate, float64(got.Iterations - got.TailIterations + got.DroppedIterations), want.ScheduledRate},
		{"duration", secs, want.DurationS, want.DurationS},
	} {
		if r.rate != "duration" && r.got != perSecond(r.of, secs) {
			t.Errorf("%s: %s = %v, not %v per %v s", name, r.rate, r.got, r.of, secs)
		}
		if !relClose(r.want, r.got, 2e-3) {
			t.Errorf("%s: %s = %v, want %v", name, r.rate, r.got, r.want)
		}
	}
}

func compareDist(t *testing.T, name string, want, got Dist) {
	t.Helper()
	if want.Count != got.Count || want.Min != got.Min || want.Max != got.Max || want.Clamped != got.Clamped {
		t.Errorf("%s: count, min, max, clamped = %d %v %v %d, want %d %v %v %d", name,
			got.Count, got.Min, got.Max, got.Clamped, want.Count, want.Min, want.Max, want.Clamped)
	}
	if math.Abs(want.Mean-got.Mean) > 1e-3+1e-9 || want.Stddev != got.Stddev {
		t.Errorf("%s: mean, stddev = %v %v, want %v %v", name, got.Mean, got.Stddev, want.Mean, want.Stddev)
	}
	wq := []float64{want.P50, want.P90, want.P95, want.P99, want.P999}
	gq := []float64{got.P50, got.P90, got.P95, got.P99, got.P999}
	for _, iv := range [][2]Interval{{want.CI.P50, got.CI.P50}, {want.CI.P90, got.CI.P90}, {want.CI.P95, got.CI.P95},
		{want.CI.P99, got.CI.P99}, {want.CI.P999, got.CI.P999}} {
		wq, gq = append(wq, iv[0][0], iv[0][1]), append(gq, iv[1][0], iv[1][1])
	}
	for i := range wq {
		if !sameBucket(wq[i], gq[i]) {
			t.Errorf("%s: percentiles and intervals = %v, want %v", name, gq, wq)
			break
		}
	}
	if !slices.Equal(want.Unreliable, got.Unreliable) || want.LowSamples != got.LowSamples {
		t.Errorf("%s: unreliable %v %v, want %v %v", name, got.Unreliable, got.LowSamples, want.Unreliable, want.LowSamples)
	}
	if want.HDR != got.HDR || !reflect.DeepEqual(want.Histogram, got.Histogram) {
		t.Errorf("%s: histograms differ (hdr %d bytes, want %d; buckets %v, want %v)", name,
			len(got.HDR), len(want.HDR), got.Histogram, want.Histogram)
	}
}

func compareTags(t *testing.T, name string, want, got map[string]map[string]TagSummary) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: tag keys %v, want %v", name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for key, values := range want {
		if len(values) != len(got[key]) {
			t.Errorf("%s: tag %s has %d values, want %d", name, key, len(got[key]), len(values))
		}
		for value, w := range values {
			g := got[key][value]
			tag := fmt.Sprintf("%s %s=%s", name, key, value)
			if w.Requests != g.Requests || w.OK != g.OK || w.Failed != g.Failed {
				t.Errorf("%s: requests, ok, failed = %d %d %d, want %d %d %d", tag, g.Requests, g.OK, g.Failed, w.Requests, w.OK, w.Failed)
			}
			compareDist(t, tag+" ttft", w.TTFT, g.TTFT)
			compareDist(t, tag+" tpot", w.TPOT, g.TPOT)
			compareDist(t, tag+" e2e", w.E2E, g.E2E)
		}
	}
}

// compareTargets holds the merged breakdown by target to the single
// collector's: counts exactly, distributions as compareDist does.
func compareTargets(t *testing.T, name string, want, got map[string]TargetSummary) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !slices.Equal(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))) {
		t.Errorf("%s: targets %v, want %v", name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for target, w := range want {
		g := got[target]
		compareTags(t, name+" target", map[string]map[string]TagSummary{"target": {target: w.TagSummary}},
			map[string]map[string]TagSummary{"target": {target: g.TagSummary}})
		w.TagSummary, g.TagSummary = TagSummary{}, TagSummary{}
		diffFields(t, name+" target "+target, w, g)
	}
}

func compareMetrics(t *testing.T, name string, want, got map[string]MetricSummary) {
	t.Helper()
	if !slices.Equal(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))) {
		t.Errorf("%s: metrics %v, want %v", name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for m, w := range want {
		g := got[m]
		compareDist(t, name+" "+m, w.Trend, g.Trend)
		if !relClose(w.PerSec, g.PerSec, 2e-3) {
			t.Errorf("%s %s: per second = %v, want %v", name, m, g.PerSec, w.PerSec)
		}
		w.Trend, g.Trend, w.PerSec, g.PerSec = Dist{}, Dist{}, 0, 0
		if !reflect.DeepEqual(w, g) {
			t.Errorf("%s %s = %+v, want %+v", name, m, g, w)
		}
	}
}

func compareSeries(t *testing.T, want, got []Point) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if !sameBucket(deref(w.TTFTP50), deref(g.TTFTP50)) || !sameBucket(deref(w.TTFTP99), deref(g.TTFTP99)) ||
			(w.TTFTP50 == nil) != (g.TTFTP50 == nil) {
			t.Errorf("second %d: ttft p50, p99 = %v %v, want %v %v", w.T, deref(g.TTFTP50), deref(g.TTFTP99), deref(w.TTFTP50), deref(w.TTFTP99))
		}
		w.TTFTP50, w.TTFTP99, g.TTFTP50, g.TTFTP99 = nil, nil, nil, nil
		if w != g {
			t.Errorf("point %d = %+v, want %+v", i, g, w)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// diffFields reports each field of two structs that differs.
func diffFields[T any](t *testing.T, name string, want, got T) {
	t.Helper()
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range wv.NumField() {
		if w, g := wv.Field(i).Interface(), gv.Field(i).Interface(); !reflect.DeepEqual(w, g) {
			t.Errorf("%s: %s = %+v, want %+v", name, wv.Type().Field(i).Name, g, w)
		}
	}
}

// BenchmarkMerge merges four segments of the seeded run (about 1,200
// requests, seven stages, seven views), their States read from JSON as
// from result files.
func BenchmarkMerge(b *testing.B) {
	_, segs := mergeRun(b, 42, 4)
	parts := partsOf(segs)
	files := make([][]byte, len(parts))
	for i, p := range parts {
		files[i], _ = json.Marshal(p.State)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range parts {
			parts[i].State = new(State)
			if err := json.Unmarshal(files[i], parts[i].State); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := Merge(parts); err != nil {
			b.Fatal(err)
		}
	}
}

// tailInputs are the inputs embedded by requests of the stage's tail,
// which its rate leaves out: the whole stage's less the window's.
func tailInputs(s *StageSummary) float64 {
	if s.InputsPerSec == 0 || s.DurationS == 0 {
		return float64(s.Inputs)
	}
	return float64(s.Inputs) - s.InputsPerSec*s.DurationS
}
