package merge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/threshold"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// seg describes one synthetic segment run.
type seg struct {
	index, count int
	ttft         time.Duration // of each of its requests
	requests     int
	failed       bool // every request fails
	skew         time.Duration
	thresholds   []plan.ThresholdSpec
	tasks        []engine.TaskSample // recorded in its stage, their Starts from t0
	edit         func(*result.Result)
}

// build runs a collector over the segment's requests and makes the
// result file a segment run writes.
func (s seg) build(t *testing.T) Input {
	t.Helper()
	plan := plan.Plan{Seed: 7, Thresholds: s.thresholds}
	col := metrics.NewCollector()
	set, err := run.ParseThresholds(plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range set {
		if th.NeedsTrack() {
			if err := col.Track(th.Metric, th.Filter); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := t0.Add(s.skew)
	col.StageStarted(engine.StageMark{Scenario: "sweep", Stage: "c4", Index: 0, Target: 1, At: start})
	for i := range s.requests {
		r := engine.Result{Start: start.Add(time.Duration(i) * 10 * time.Millisecond), Status: 200,
			TTFB: s.ttft / 2, TTFT: s.ttft, TTFC: s.ttft, E2E: s.ttft + 50*time.Millisecond,
			TPOT: 5 * time.Millisecond, OutputTokens: 10, TokensSource: engine.TokensFromUsage}
		if s.failed {
			r = engine.Result{Start: r.Start, Status: 500, Err: &engine.Error{Class: "http_5xx:500", Message: "boom"}}
		}
		col.Sample(engine.Sample{Scenario: "sweep", Stage: "c4", Result: r})
	}
	for _, x := range s.tasks {
		x.Scenario, x.Stage, x.Start = "sweep", "c4", start.Add(x.Start.Sub(t0))
		col.Task(x)
	}
	col.StageEnded(engine.StageMark{Scenario: "sweep", Stage: "c4", Index: 0, Target: 1, At: start.Add(2 * time.Second)})
	summary := col.Close()
	for i := range summary.Stages {
		summary.Stages[i].Client = &engine.ClientCheck{CPUPercent: float64(10 * (s.index + 1)), Cores: 2}
	}
	res := result.New(result.Meta{Scenario: "seg.lua", Model: "m", Start: start.Add(-time.Second), End: start.Add(3 * time.Second),
		Complete: true, Seed: 7, Plan: "abc"}, summary)
	res.Run.Segment = &result.Segment{Index: s.index, Count: s.count, Host: fmt.Sprintf("h%d", s.index),
		PlannedStart: t0, ActualStart: start}
	res.Mergeable = result.MergeableFrom(plan, col.State(), nil, "")
	if s.edit != nil {
		s.edit(res)
	}
	return Input{Path: fmt.Sprintf("seg-%d.json", s.index), Result: res}
}

func inputs(t *testing.T, segs ...seg) []Input {
	t.Helper()
	var in []Input
	for _, s := range segs {
		in = append(in, s.build(t))
	}
	return in
}

func TestMergeRefusesSetsThatAreNotOneRun(t *testing.T) {
	ok := func(i, n int) seg { return seg{index: i, count: n, ttft: 100 * time.Millisecond, requests: 3} }
	edit := func(s seg, f func(*result.Result)) seg { s.edit = f; return s }
	cases := []struct {
		name string
		segs []seg
		want string
	}{
		{"none", nil, "no result files given"},
		{"missing", []seg{ok(0, 3), ok(2, 3)}, "segment 1/3 is missing (2 of 3 given)"},
		{"two missing", []seg{ok(0, 3)}, "segments 1/3, 2/3 are missing"},
		{"twice", []seg{ok(0, 2), ok(1, 2), ok(1, 2)}, "segment 1/2 is in both seg-1.json and seg-1.json"},
		{"counts", []seg{ok(0, 2), ok(1, 3)}, "results of different segment counts"},
		{"index", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Run.Segment.Index = 5 })}, "segment index 5 is outside 0..1"},
		{"plans", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Run.Plan = "def" })}, "different plans (fingerprints abc and def)"},
		{"seeds", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Run.Seed = 8 })}, "different seeds (7 and 8)"},
		{"models", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Run.Model = "other" })}, `different models ("m" and "other")`},
		{"whole run", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Run.Segment, r.Mergeable = nil, nil })}, "seg-1.json is not a segment result"},
		{"merged", []seg{edit(ok(0, 2), func(r *result.Result) {
			r.Run.Segment, r.Mergeable = nil, nil
			r.Run.Segments = []result.Segment{{Index: 0, Count: 2}}
		})}, "already a merged result"},
		{"no state", []seg{ok(0, 2), edit(ok(1, 2), func(r *result.Result) { r.Mergeable.State = nil })}, "seg-1.json is not a segment result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Merge(inputs(t, c.segs...), "test")
			if !errors.Is(err, ErrInputs) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrInputs with %q", err, c.want)
			}
		})
	}
}

// The thresholds are judged on the merged run: 3 requests per segment fail
// "count > 5" alone, and pass it merged.
func TestMergeJudgesThresholdsOnTheMergedData(t *testing.T) {
	cases := []struct {
		name    string
		conds   []string
		verdict run.Verdict
	}{
		{"passes merged only", []string{"count > 5"}, run.Passed},
		{"fails merged", []string{"count > 6"}, run.GateFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := []plan.ThresholdSpec{{Expr: "requests", Conditions: c.conds}}
			in := inputs(t,
				seg{index: 1, count: 2, ttft: 300 * time.Millisecond, requests: 3, thresholds: spec},
				seg{index: 0, count: 2, ttft: 100 * time.Millisecond, requests: 3, thresholds: spec})
			res, out, err := Merge(in, "test")
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != c.verdict {
				t.Errorf("verdict %v (%s), want %v", out.Verdict, out.Reason, c.verdict)
			}
			if len(res.Thresholds) != 1 || res.Thresholds[0].Outcomes[0].Observed != 6 {
				t.Errorf("thresholds %+v", res.Thresholds)
			}
			st := res.Stages[0]
			if st.Requests != 6 || st.VUs != 2 || st.TTFT.Count != 6 || st.TTFT.Min != 100 || st.TTFT.Max != 300 {
				t.Errorf("merged stage: requests %d, VUs %d, TTFT %+v", st.Requests, st.VUs, st.TTFT)
			}
			// Sorted by index, with the file each came from.
			if len(res.Run.Segments) != 2 || res.Run.Segments[0].File != "seg-0.json" || res.Run.Segments[1].Host != "h1" {
				t.Errorf("segments %+v", res.Run.Segments)
			}
			if c := st.Client; c == nil || c.CPUPercent != 20 {
				t.Errorf("client health %+v, want the worst segment's (20%%)", c)
			}
			if res.Mergeable != nil || res.Run.Segment != nil || res.Run.Plan != "abc" {
				t.Errorf("merged result: mergeable %v, segment %v, plan %q", res.Mergeable, res.Run.Segment, res.Run.Plan)
			}
		})
	}
}

func TestMergeOutcomes(t *testing.T) {
	good := func(i int) seg { return seg{index: i, count: 2, ttft: 100 * time.Millisecond, requests: 3} }
	cases := []struct {
		name    string
		segs    []seg
		verdict run.Verdict
		reason  string
		warning string
	}{
		{"passed", []seg{good(0), good(1)}, run.Passed, "", ""},
		{"nothing measured", []seg{{index: 0, count: 2, requests: 3, failed: true}, {index: 1, count: 2, requests: 2, failed: true}},
			run.Failed, "nothing measured", ""},
		{"interrupted", []seg{good(0), func() seg {
			s := good(1)
			s.edit = func(r *result.Result) { r.Run.Complete = false }
			return s
		}()}, run.Failed, "segment 1/2 (seg-1.json) did not complete (interrupted)", "segment 1/2 (seg-1.json) did not complete"},
		{"aborted by a threshold", []seg{good(0), func() seg {
			s := good(1)
			s.thresholds = []plan.ThresholdSpec{{Expr: "ttft", Conditions: []string{"p(99) < 1ms"}, AbortOnFail: true}}
			s.edit = func(r *result.Result) {
				r.Run.Complete = false
				r.Thresholds = append(r.Thresholds, thresholdAborted("ttft"))
			}
			return s
		}()}, run.GateFailed, "segment 1/2: threshold ttft failed: the segment was aborted", ""},
		{"started apart", []seg{good(0), func() seg { s := good(1); s.skew = 400 * time.Millisecond; return s }()},
			run.Passed, "", "segments started 400ms apart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out, err := Merge(inputs(t, c.segs...), "test")
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != c.verdict || !strings.Contains(out.Reason, c.reason) {
				t.Errorf("outcome %v %q, want %v %q", out.Verdict, out.Reason, c.verdict, c.reason)
			}
			if c.warning != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) {
				t.Errorf("warnings lack %q:\n%s", c.warning, strings.Join(res.Warnings, "\n"))
			}
		})
	}
}

func thresholdAborted(expr string) threshold.Result {
	return threshold.Result{Expr: expr, Aborted: true}
}

// Every segment scrapes the one server: the merged series are all their
// points on the merged run's clock, in time order.
func TestMergeJoinsServerMetrics(t *testing.T) {
	mk := func(i int, ts ...float64) seg {
		s := seg{index: i, count: 2, ttft: 100 * time.Millisecond, requests: 2, skew: time.Duration(i) * time.Second}
		s.edit = func(r *result.Result) {
			r.ServerMetrics = &servermetrics.Result{URL: "http://srv/metrics", Scrapes: len(ts), Failures: i,
				Errors: []string{"timeout"}, Server: "vllm", Families: 30 + i, Known: 5,
				Series: []servermetrics.Series{{Name: "vllm:num_requests_waiting", Role: "waiting", T: ts, V: ts}}}
		}
		return s
	}
	res, _, err := Merge(inputs(t, mk(0, 0, 2, 4), mk(1, 0, 2)), "test")
	if err != nil {
		t.Fatal(err)
	}
	sm := res.ServerMetrics
	if sm == nil || sm.Scrapes != 5 || sm.Failures != 1 || len(sm.Errors) != 1 || len(sm.Series) != 1 ||
		sm.Server != "vllm" || sm.Families != 31 || sm.Known != 5 || sm.Series[0].Role != "waiting" {
		t.Fatalf("server metrics %+v", sm)
	}
	// Segment 1 started its run a second later: its t=0 is the merged t=1.
	want := []float64{0, 1, 2, 3, 4}
	if got := sm.Series[0].T; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("T = %v, want %v", got, want)
	}
	if got := sm.Series[0].V; fmt.Sprint(got) != "[0 0 2 2 4]" {
		t.Errorf("V = %v", got)
	}
}

// Segments of a run with two replicas: the sums are joined as one
// server's series, and each replica with its own.
func TestMergeJoinsEndpoints(t *testing.T) {
	endpoint := func(url string, v float64, ts ...float64) servermetrics.Result {
		vs := make([]float64, len(ts))
		for i := range vs {
			vs[i] = v
		}
		return servermetrics.Result{URL: url, Scrapes: len(ts), Server: "vllm",
			Series: []servermetrics.Series{{Name: "vllm:num_requests_waiting", Role: "waiting", T: ts, V: vs}}}
	}
	mk := func(i int, ts ...float64) seg {
		s := seg{index: i, count: 2, ttft: 100 * time.Millisecond, requests: 2, skew: time.Duration(i) * time.Second}
		s.edit = func(r *result.Result) {
			a, b := endpoint("http://a/metrics", 1, ts...), endpoint("http://b/metrics", 2, ts...)
			b.Target, b.Discovered = "b", true
			sum := endpoint("", 3, ts...).Series[0]
			sum.Name = "sum(vllm:num_requests_waiting)"
			r.ServerMetrics = &servermetrics.Result{Scrapes: 2 * len(ts), Server: "vllm",
				Series: []servermetrics.Series{sum}, Endpoints: []servermetrics.Result{a, b}}
		}
		return s
	}
	res, _, err := Merge(inputs(t, mk(0, 0, 2), mk(1, 0)), "test")
	if err != nil {
		t.Fatal(err)
	}
	sm := res.ServerMetrics
	if sm == nil || len(sm.Endpoints) != 2 || sm.Scrapes != 6 || sm.URL != "" {
		t.Fatalf("server metrics %+v, want 2 endpoints of 6 scrapes", sm)
	}
	if s := sm.ByRole("waiting"); s == nil || s.Name != "sum(vllm:num_requests_waiting)" || fmt.Sprint(s.T, s.V) != "[0 1 2] [3 3 3]" {
		t.Errorf("the sum %+v, want 3 at 0, 1, 2", s)
	}
	for i, want := range []struct {
		url, target string
		v           string
	}{{"http://a/metrics", "", "[1 1 1]"}, {"http://b/metrics", "b", "[2 2 2]"}} {
		e := sm.Endpoints[i]
		if e.URL != want.url || e.Target != want.target || e.Scrapes != 3 || fmt.Sprint(e.Series[0].V) != want.v || len(e.Endpoints) != 0 {
			t.Errorf("endpoint %d: %+v, want %s's, values %s", i, e, want.url, want.v)
		}
	}
	if !sm.Endpoints[1].Discovered {
		t.Error("the discovered endpoint lost its mark")
	}
}

// withParts gives a segment the plan parts a run records: the script
// "src", the seed, the --set values and data files given.
func withParts(s seg, seed int64, params, data map[string]string, scenarios ...plan.Scenario) seg {
	s.edit = func(r *result.Result) {
		parts := plan.Plan{Seed: seed, Scenarios: scenarios}.Parts([]byte("src"), params, data)
		r.Run.Seed, r.Run.Plan, r.Run.PlanParts = seed, parts.Fingerprint(), &parts
	}
	return s
}

// With the plan's parts recorded, merge names what differs; results
// without them (older versions) are refused by fingerprint as before,
// and merge when their fingerprints agree.
func TestMergeNamesWhatDiffers(t *testing.T) {
	ok := func(i int) seg { return seg{index: i, count: 2, ttft: 100 * time.Millisecond, requests: 3} }
	same := withParts(ok(0), 1, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d1"})
	cases := []struct {
		name  string
		other seg
		want  string // "" merges
	}{
		{"same plan", withParts(ok(1), 1, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d1"}), ""},
		{"seed", withParts(ok(1), 2, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d1"}),
			"seg-0.json and seg-1.json differ in the seed (1 and 2)"},
		{"--set value", withParts(ok(1), 1, map[string]string{"rate": "6"}, map[string]string{"prompts.jsonl": "d1"}),
			"differ in --set rate:"},
		{"--set key", withParts(ok(1), 1, nil, map[string]string{"prompts.jsonl": "d1"}),
			"differ in --set rate (set for only one)"},
		{"data file", withParts(ok(1), 1, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d2"}),
			"differ in data file prompts.jsonl:"},
		{"seed and data", withParts(ok(1), 3, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d2"}),
			"differ in the seed (1 and 3) and data file prompts.jsonl"},
		{"shape", withParts(ok(1), 1, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d1"}, plan.Scenario{Name: "x"}),
			"differ in the plan's shape (scenarios)"},
		{"script", func() seg {
			s := withParts(ok(1), 1, map[string]string{"rate": "5"}, map[string]string{"prompts.jsonl": "d1"})
			edit := s.edit
			s.edit = func(r *result.Result) {
				edit(r)
				r.Run.PlanParts.Script = strings.Repeat("cd", 32)
				r.Run.Plan = r.Run.PlanParts.Fingerprint()
			}
			return s
		}(), "differ in the script (sha256 "},
		{"older file", edit(ok(1), func(r *result.Result) { r.Run.Plan = "def" }), "different plans (fingerprints "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Merge(inputs(t, same, c.other), "test")
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInputs) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrInputs with %q", err, c.want)
			}
			if strings.Contains(fmt.Sprint(err), "rate=") || strings.Contains(fmt.Sprint(err), " 6") {
				t.Errorf("err shows a --set value: %v", err)
			}
		})
	}
	// Two older files of one plan still merge.
	if _, _, err := Merge(inputs(t, ok(0), ok(1)), "test"); err != nil {
		t.Errorf("older files of one plan: %v", err)
	}
}

func edit(s seg, f func(*result.Result)) seg { s.edit = f; return s }

// Segments that did not complete still merge, into a result marked
// incomplete whose outcome, warnings and summary name every one of them:
// exit 1, never 0 or 99.
func TestMergeOfIncompleteSegments(t *testing.T) {
	good := func(i int) seg { return seg{index: i, count: 3, ttft: 100 * time.Millisecond, requests: 3} }
	cut := func(i int, why string) seg {
		return edit(good(i), func(r *result.Result) { r.Run.Complete, r.Run.Aborted = false, why })
	}
	res, out, err := Merge(inputs(t, good(0), cut(1, ""), cut(2, "stopped by an error: boom")), "test")
	if err != nil {
		t.Fatal(err)
	}
	want := "segment 1/3 (seg-1.json) did not complete (interrupted) and segment 2/3 (seg-2.json) did not complete (stopped by an error: boom)"
	if out.Verdict != run.Failed || !strings.Contains(out.Reason, want) {
		t.Errorf("outcome %v %q, want Failed with %q", out.Verdict, out.Reason, want)
	}
	if res.Run.Complete || res.Stages[0].Requests != 9 {
		t.Errorf("merged: complete %v, %d requests; want incomplete with all 9", res.Run.Complete, res.Stages[0].Requests)
	}
	var text strings.Builder
	if err := report.Text(res)(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"segment 1/3 (seg-1.json) did not complete", "segment 2/3 (seg-2.json) did not complete", "run incomplete"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, text.String())
		}
	}
	// An interrupted segment outranks a failed threshold: the verdict of
	// an incomplete run cannot gate.
	spec := []plan.ThresholdSpec{{Expr: "requests", Conditions: []string{"count > 100"}}}
	failing := func(s seg) seg { s.thresholds = spec; return s }
	if _, out, err := Merge(inputs(t, failing(good(0)), failing(cut(1, "")), failing(good(2))), "test"); err != nil || out.Verdict != run.Failed {
		t.Errorf("incomplete and failing a threshold: %v %+v, want Failed", err, out)
	}
}

// Segments that each read GPUs: their nvidia-smi devices (one machine
// each) and the one DCGM exporter they all scraped are joined on the
// merged clock, and the merged stage's GPU figures are drawn from them,
// where a merge used to drop the section.
func TestMergeJoinsGPU(t *testing.T) {
	power := func(uuid string, ts ...float64) servermetrics.Series {
		return servermetrics.Series{Name: "DCGM_FI_DEV_POWER_USAGE", Role: servermetrics.RoleGPUPower, Unit: servermetrics.UnitWatts,
			T: ts, V: slices.Repeat([]float64{100}, len(ts)), GPU: &servermetrics.GPU{Index: "0", UUID: uuid}}
	}
	mk := func(i int, uuid string) seg {
		s := seg{index: i, count: 2, ttft: 100 * time.Millisecond, requests: 4, skew: time.Duration(i) * time.Second}
		s.edit = func(r *result.Result) {
			r.GPU = &result.GPU{Asked: []string{"nvidia-smi", "http://dcgm:9400/metrics"},
				NvidiaSMI: &servermetrics.Result{URL: "nvidia-smi", Scrapes: 3, Series: []servermetrics.Series{power(uuid, 0, 1, 2)}},
				Exporters: []servermetrics.Result{{URL: "http://dcgm:9400/metrics", Scrapes: 2, Series: []servermetrics.Series{power("GPU-x", 0.5, 1.5)}}},
			}
		}
		return s
	}
	res, _, err := Merge(inputs(t, mk(0, "GPU-a"), mk(1, "GPU-b")), "test")
	if err != nil {
		t.Fatal(err)
	}
	g := res.GPU
	if g == nil || len(g.Asked) != 2 || g.NvidiaSMI == nil || len(g.NvidiaSMI.Series) != 2 || len(g.Exporters) != 1 {
		t.Fatalf("merged GPU section %+v", g)
	}
	if got := g.Exporters[0].Series; len(got) != 1 || fmt.Sprint(got[0].T) != "[0.5 1.5 1.5 2.5]" || got[0].GPU == nil {
		t.Errorf("the exporter's series %+v", got)
	}
	if len(g.Stages) != 1 {
		t.Fatalf("stages %+v", g.Stages)
	}
	st := g.Stages[0]
	if st.GPUs != 3 || st.GPU == nil || st.GPU.EnergyJ == nil || st.JoulesPerToken == nil || st.TokPerSecPerGPU == nil {
		t.Fatalf("merged stage %+v", st)
	}
	if want := *st.GPU.EnergyJ / float64(res.Stages[0].OutputTokens); *st.JoulesPerToken != want {
		t.Errorf("J/token %v, want %v", *st.JoulesPerToken, want)
	}
}
