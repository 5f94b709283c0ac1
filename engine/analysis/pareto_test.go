package analysis

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// level is one stage of a Pareto test: its VUs, median TPOT (ms), output
// tok/s and share of requests within the SLO.
type level struct {
	vus       int
	tpot, tok float64
	good      float64
}

func paretoStages(levels ...level) []metrics.StageSummary {
	var out []metrics.StageSummary
	for i, l := range levels {
		out = append(out, metrics.StageSummary{
			Scenario: "s", Stage: "c" + strconv.Itoa(l.vus), Index: i, VUs: l.vus,
			Requests: 100, OK: 100, OutputTokens: int64(l.tok * 60), OutputTokPerSec: l.tok,
			TPOT: metrics.Dist{Count: 100, P50: l.tpot}, GoodShare: l.good,
		})
	}
	return out
}

var ttftSLO = plan.SLO{TTFT: time.Second}

// onFront lists the stages on the front, and each dominated stage with the
// stage that dominates it.
func onFront(f ParetoFront) (front []string, dominated map[string]string) {
	dominated = map[string]string{}
	for _, p := range f.Points {
		if p.OnFront {
			front = append(front, p.Stage)
		} else {
			dominated[p.Stage] = p.DominatedBy
		}
	}
	return front, dominated
}

func TestParetoDominance(t *testing.T) {
	tests := map[string]struct {
		levels        []level
		wantFront     []string
		wantDominated map[string]string
	}{
		"trade-off, all on the front": {
			[]level{{1, 10, 100, 1}, {2, 12.5, 160, 1}, {4, 20, 200, 1}},
			[]string{"c1", "c2", "c4"}, map[string]string{}},
		"past the knee: slower and no more throughput": {
			[]level{{1, 10, 100, 1}, {4, 20, 300, 1}, {8, 40, 290, 1}},
			[]string{"c1", "c4"}, map[string]string{"c8": "c4"}},
		"equal points dominate neither": {
			[]level{{1, 10, 100, 1}, {2, 10, 100, 1}},
			[]string{"c1", "c2"}, map[string]string{}},
		"tie on one axis, better on the other": {
			[]level{{1, 10, 100, 1}, {2, 10, 150, 1}},
			[]string{"c2"}, map[string]string{"c1": "c2"}},
		"tie on throughput, faster per user": {
			[]level{{1, 10, 150, 1}, {2, 20, 150, 1}},
			[]string{"c1"}, map[string]string{"c2": "c1"}},
		"one stage": {
			[]level{{1, 10, 100, 1}},
			[]string{"c1"}, map[string]string{}},
		"all dominated but one": {
			[]level{{1, 20, 90, 1}, {2, 15, 100, 1}, {4, 10, 300, 1}, {8, 25, 200, 1}},
			[]string{"c4"}, map[string]string{"c1": "c4", "c2": "c4", "c8": "c4"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := FrontOf("s", paretoStages(tc.levels...), ttftSLO, 0)
			front, dominated := onFront(f)
			if !slices.Equal(front, tc.wantFront) {
				t.Errorf("front = %v, want %v", front, tc.wantFront)
			}
			if !mapsEqual(dominated, tc.wantDominated) {
				t.Errorf("dominated = %v, want %v", dominated, tc.wantDominated)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestParetoPointFigures(t *testing.T) {
	f := FrontOf("s", paretoStages(level{4, 25, 800, 0.995}), ttftSLO, 4)
	p := f.Points[0]
	if got, want := p.PerUserTokPerSec, 40.0; got != want {
		t.Errorf("PerUserTokPerSec = %v, want %v (1000 / 25 ms)", got, want)
	}
	if got, want := p.TokPerSec, 800.0; got != want {
		t.Errorf("TokPerSec = %v, want %v", got, want)
	}
	if got, want := p.TokPerSecPerGPU, 200.0; got != want {
		t.Errorf("TokPerSecPerGPU = %v, want %v", got, want)
	}
	if got, want := p.Load, 4.0; got != want || p.LoadUnit != UnitVUs {
		t.Errorf("load = %v %s, want %v VUs", got, p.LoadUnit, want)
	}
	if f.GPUs != 4 || f.Definition != ParetoDefinition {
		t.Errorf("GPUs = %d, Definition = %q", f.GPUs, f.Definition)
	}
	for _, gpus := range []int{0, -3} {
		if unknown := FrontOf("s", paretoStages(level{4, 25, 800, 1}), ttftSLO, gpus); unknown.Points[0].TokPerSecPerGPU != 0 || unknown.GPUs != 0 {
			t.Errorf("GPU count %d: per GPU %v, GPUs %d; want both 0 (unknown)", gpus, unknown.Points[0].TokPerSecPerGPU, unknown.GPUs)
		}
	}
}

func TestParetoOpenModelLoad(t *testing.T) {
	st := paretoStages(level{0, 20, 400, 1})
	st[0].TargetRate = 2.5
	p := FrontOf("s", st, plan.SLO{}, 0).Points[0]
	if p.Load != 2.5 || p.LoadUnit != UnitReqRate {
		t.Errorf("load = %v %s, want 2.5 %s", p.Load, p.LoadUnit, UnitReqRate)
	}
}

func TestParetoBest(t *testing.T) {
	tests := map[string]struct {
		levels   []level
		slo      plan.SLO
		wantBest string
		wantText string
	}{
		"highest throughput meeting the SLO": {
			[]level{{1, 10, 100, 1}, {4, 20, 300, 0.995}, {8, 40, 400, 0.9}},
			ttftSLO, "c4", "c4 (4 VUs): the highest output tok/s of the stages with at least 99% of requests within the SLO (99.5%)"},
		"the attainment is inclusive": {
			[]level{{1, 10, 100, 1}, {4, 20, 300, 0.99}},
			ttftSLO, "c4", "c4 (4 VUs)"},
		"none meets it": {
			[]level{{1, 10, 100, 0.93}, {4, 20, 300, 0.5}},
			ttftSLO, "", "none: no stage had at least 99% of requests within the SLO (closest: c1, 93%)"},
		"no SLO set": {
			[]level{{1, 10, 100, 0}, {4, 20, 300, 0}},
			plan.SLO{}, "", "no SLO set"},
		"tie on throughput: the faster per user": {
			[]level{{1, 20, 300, 1}, {2, 10, 300, 1}},
			ttftSLO, "c2", "c2 (2 VUs)"},
		"equal points: the first": {
			[]level{{1, 10, 300, 1}, {2, 10, 300, 1}},
			ttftSLO, "c1", "c1 (1 VU)"},
		"best off the front": {
			[]level{{1, 10, 100, 1}, {2, 12, 200, 1}, {4, 11, 250, 0.5}},
			ttftSLO, "c2", "off the front: c4 is ahead on both but misses the SLO"},
		"one stage": {
			[]level{{1, 10, 100, 1}},
			ttftSLO, "c1", "c1 (1 VU)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := FrontOf("s", paretoStages(tc.levels...), tc.slo, 0)
			if got, want := f.Best, tc.wantBest; got != want {
				t.Errorf("Best = %q, want %q (%s)", got, want, f.BestText)
			}
			if !strings.Contains(f.BestText, tc.wantText) {
				t.Errorf("BestText = %q, want it to contain %q", f.BestText, tc.wantText)
			}
			if got, want := f.SLOSet, !tc.slo.RequestZero(); got != want {
				t.Errorf("SLOSet = %v, want %v", got, want)
			}
		})
	}
}

func TestParetoNoSLOLeavesGoodShare(t *testing.T) {
	// A file's good_share is 0 without an SLO; even a stray value must not
	// make a stage meet an SLO nobody set.
	f := FrontOf("s", paretoStages(level{1, 10, 100, 1}), plan.SLO{}, 0)
	if p := f.Points[0]; p.MeetsSLO || p.GoodShare != 0 {
		t.Errorf("MeetsSLO = %v, GoodShare = %v; want false, 0 without an SLO", p.MeetsSLO, p.GoodShare)
	}
}

func TestParetoEligibility(t *testing.T) {
	tests := map[string]struct {
		edit func(*metrics.StageSummary)
		want string
	}{
		"eligible":                {func(*metrics.StageSummary) {}, ""},
		"warmup":                  {func(s *metrics.StageSummary) { s.Stage = "Warmup" }, SkipWarmup},
		"dirty only":              {func(s *metrics.StageSummary) { s.Requests, s.OK, s.DirtyRequests = 0, 0, 40 }, SkipDirty},
		"failed only":             {func(s *metrics.StageSummary) { s.OK, s.Failed = 0, 100 }, SkipNoOK},
		"nothing ran":             {func(s *metrics.StageSummary) { s.Requests, s.OK = 0, 0 }, SkipNoOK},
		"zero tokens":             {func(s *metrics.StageSummary) { s.OutputTokens, s.OutputTokPerSec = 0, 0 }, SkipNoToken},
		"tokens only in the tail": {func(s *metrics.StageSummary) { s.OutputTokPerSec = 0 }, SkipNoToken},
		"one-token answers":       {func(s *metrics.StageSummary) { s.TPOT = metrics.Dist{} }, SkipNoTPOT},
		"some failures kept":      {func(s *metrics.StageSummary) { s.Failed, s.Requests = 10, 110 }, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stages := paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1})
			tc.edit(&stages[1])
			f := FrontOf("s", stages, ttftSLO, 0)
			var got string
			for _, sk := range f.Skipped {
				if sk.Stage == stages[1].Stage {
					got = sk.Reason
				}
			}
			if got != tc.want {
				t.Errorf("skip reason = %q, want %q", got, tc.want)
			}
			if wantPoints := 1 + btoi(tc.want == ""); len(f.Points) != wantPoints {
				t.Errorf("%d points, want %d", len(f.Points), wantPoints)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParetoAllSkipped(t *testing.T) {
	stages := paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1})
	for i := range stages {
		stages[i].OK, stages[i].Failed = 0, 100
	}
	f := FrontOf("s", stages, ttftSLO, 0)
	if len(f.Points) != 0 || f.Points == nil || f.Best != "" || len(f.Skipped) != 2 {
		t.Errorf("points %v (nil %v), best %q, skipped %v; want no points (not nil), no best, both skipped", f.Points, f.Points == nil, f.Best, f.Skipped)
	}
	if !strings.Contains(f.BestText, "no stage placed a point") {
		t.Errorf("BestText = %q", f.BestText)
	}
}

func TestParetoPerSweep(t *testing.T) {
	sweepA := paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1}, level{4, 20, 250, 1})
	two := paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1})
	probes := paretoStages(level{8, 10, 100, 1}, level{4, 10, 90, 1}, level{6, 10, 95, 1})
	sweepB := paretoStages(level{1, 10, 100, 1}, level{4, 30, 90, 1}, level{8, 40, 95, 1})
	for name, group := range map[string][]metrics.StageSummary{"two": two, "probes": probes, "b": sweepB} {
		for i := range group {
			group[i].Scenario = name
		}
	}
	fronts := Pareto(slices.Concat(sweepA, two, probes, sweepB), ttftSLO, 0)
	var names []string
	for _, f := range fronts {
		names = append(names, f.Scenario)
	}
	if want := []string{"s", "b"}; !slices.Equal(names, want) {
		t.Fatalf("fronts of %v, want %v (two stages, or loads up and down, are no sweep)", names, want)
	}
	if front, _ := onFront(fronts[1]); !slices.Equal(front, []string{"c1"}) {
		t.Errorf("b's front = %v, want [c1]", front)
	}
}

func TestAnalyzeHasPareto(t *testing.T) {
	a := Analyze(paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1}, level{4, 25, 200, 0.5}), ttftSLO, Server{})
	if len(a.Pareto) != 1 || a.Pareto[0].Best != "c2" {
		t.Fatalf("Analyze's Pareto = %+v, want one front with best c2", a.Pareto)
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"pareto":[`, `"per_user_tok_per_sec":100`, `"on_front":true`, `"best":"c2"`, `"meets_slo":false`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s: %s", key, data)
		}
	}
	if data, _ := json.Marshal(Analyze(nil, plan.SLO{}, Server{})); strings.Contains(string(data), "pareto") {
		t.Errorf("an analysis without stages writes a pareto key: %s", data)
	}
}

// TestParetoRecorded reads real sweeps: the llama.cpp server with 4 slots,
// where 1 VU is fastest per user and 16 VUs deliver the most, and the
// simulator's chat mix, where 16 VUs beat 8 on both axes.
func TestParetoRecorded(t *testing.T) {
	tests := map[string]struct {
		file          string
		wantFront     []string
		wantDominated map[string]string
	}{
		"llama.cpp 4 slots":  {"llamacpp-sweep-4slots.json", []string{"c1", "c16"}, map[string]string{"c4": "c1", "c8": "c16"}},
		"simulator chat mix": {"chat_mix-seed42.json", []string{"c1", "c4", "c16"}, map[string]string{"c8": "c16"}},
		// 2 req/s delivered no more tokens than 1 req/s over its window.
		"open loop": {"open_loop-seed42.json", []string{"r1", "r4", "r6"}, map[string]string{"r2": "r1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stages, _ := recorded(t, tc.file)
			fronts := Pareto(stages, plan.SLO{}, 0)
			if len(fronts) != 1 {
				t.Fatalf("%d fronts, want 1", len(fronts))
			}
			f := fronts[0]
			front, dominated := onFront(f)
			if !slices.Equal(front, tc.wantFront) || !mapsEqual(dominated, tc.wantDominated) {
				t.Errorf("front %v, dominated %v; want %v, %v", front, dominated, tc.wantFront, tc.wantDominated)
			}
			if f.SLOSet || f.Best != "" || !strings.Contains(f.BestText, "no SLO set") {
				t.Errorf("no SLO in the file: SLOSet %v, Best %q, %q", f.SLOSet, f.Best, f.BestText)
			}
			for i, p := range f.Points {
				if want := 1000 / stages[i].TPOT.P50; p.PerUserTokPerSec != want || p.TokPerSec != stages[i].OutputTokPerSec {
					t.Errorf("%s: %v tok/s/user × %v tok/s, want %v × %v", p.Stage, p.PerUserTokPerSec, p.TokPerSec, want, stages[i].OutputTokPerSec)
				}
			}
		})
	}
}

func TestParetoSuspect(t *testing.T) {
	stages := paretoStages(level{1, 10, 100, 1}, level{2, 12, 180, 1})
	stages[1].Client = &engine.ClientCheck{MachineBusy: true}
	f := FrontOf("s", stages, ttftSLO, 0)
	if got, want := f.Suspect, "c2: the machine was busy with other processes"; got != want {
		t.Errorf("Suspect = %q, want %q", got, want)
	}
	if len(f.Points[0].Suspect) != 0 || len(f.Points[1].Suspect) != 1 {
		t.Errorf("points' Suspect = %v, %v; want none, one", f.Points[0].Suspect, f.Points[1].Suspect)
	}
}
