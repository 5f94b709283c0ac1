package lint

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
)

// Plans the table tests judge.

func closed(name string, vus int, d time.Duration, stages ...string) plan.Scenario {
	sc := plan.Scenario{Name: name, Executor: plan.ExecutorRampingVUs, Exec: "f"}
	for _, st := range stages {
		sc.Stages = append(sc.Stages, plan.Stage{Name: st, Target: vus, Duration: d})
	}
	return sc
}

func open(name string, rate float64, d time.Duration, stages ...string) plan.Scenario {
	sc := plan.Scenario{Name: name, Executor: plan.ExecutorRampingArrivalRate, Exec: "f", MaxVUsCap: 10}
	for _, st := range stages {
		sc.Stages = append(sc.Stages, plan.Stage{Name: st, Rate: rate, Duration: d})
	}
	return sc
}

func planOf(warm bool, scs ...plan.Scenario) plan.Plan {
	p := plan.Plan{Scenarios: scs}
	if warm {
		p.Warmup.Requests = 5
	}
	return p
}

// sampled observes n iterations of scenario sc, one request each, built
// by req(i), as a dry run would hand them over.
func sampled(sc string, n int, req func(i int) *engine.ChatRequest) []Tally {
	o := NewObserver(n)
	for i := range n {
		o.Observe(iter(sc, "", 1, int64(i)), req(i), "")
	}
	return o.Tallies()
}

func unique(i int) *engine.ChatRequest { return chat(fmt.Sprintf("[req_%d] hello", i)) }
func cycled(i int) *engine.ChatRequest { return chat(fmt.Sprint("prompt ", i%5)) }

func parse(t *testing.T, p plan.Plan, specs map[string]string) threshold.Set {
	t.Helper()
	var set threshold.Set
	for expr, cond := range specs {
		th, err := threshold.Parse(plan.ThresholdSpec{Expr: expr, Conditions: []string{cond}}, threshold.KnownOf(p))
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, th)
	}
	return set
}

// ids lists the lints as "severity id [where]" for comparison.
func ids(ls []Lint) string {
	var out []string
	for _, l := range ls {
		s := string(l.Severity) + " " + l.ID
		if w := l.Where(); w != "" {
			s += " [" + w + "]"
		}
		if l.Ignored != "" {
			s += " ignored"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// TestCheckPlan: each rule fires on a plan built for it, and stays quiet
// on one that follows the practice.
func TestCheckPlan(t *testing.T) {
	zero, seed := 0.0, int64(42)
	long := open("o", 200, 10*time.Second, "r1") // 2,000 requests: long enough for anything
	trace := plan.Scenario{Name: "t", Executor: plan.ExecutorTrace, Exec: "f", MaxVUsCap: 4,
		Stages: []plan.Stage{{Name: "t", Duration: time.Second}}, Trace: &plan.Trace{Arrivals: make([]plan.TraceArrival, 3000)}}
	capacity := plan.Scenario{Name: "c", Executor: plan.ExecutorCapacity, Exec: "f",
		Capacity: &plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 8, Growth: 2}}
	tests := []struct {
		name    string
		in      func(t *testing.T) Input
		want    string
		fixHint string // a word the first lint's fix must hold
	}{
		{"good practice is quiet", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, unique)}
		}, "", ""},
		{"no warmup", func(*testing.T) Input { return Input{Plan: planOf(false, long)} }, "warning no-warmup", "options.warmup"},
		{"no warmup needed by a trace or a capacity search", func(*testing.T) Input {
			return Input{Plan: planOf(false, trace, capacity)}
		}, "", ""},
		{"prompts cycled without a unique prefix", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, cycled)}
		}, "warning repeated-prefix [o]", "request_id"},
		{"a shared long start is a repeated prefix", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				return chat(strings.Repeat("RAG context. ", 20) + fmt.Sprint(i))
			})}
		}, "warning repeated-prefix [o]", ""},
		{"a trace's shared prefixes are by design", func(*testing.T) Input {
			return Input{Plan: planOf(true, trace), Sampled: sampled("t", 100, cycled)}
		}, "info repeated-prefix [t]", "salt"},
		{"hits asked for by prefix_hit are by design", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := chat(strings.Repeat("shared prefix. ", 20) + fmt.Sprint(i))
				r.PrefixAsked = engine.PrefixAsked{Shared: 60, Tokens: 100}
				return r
			})}
		}, "info repeated-prefix [o]", "share asked"},
		{"hits asked for do not excuse others", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := chat(strings.Repeat("shared prefix. ", 20) + fmt.Sprint(i))
				if i%2 == 0 {
					r.PrefixAsked = engine.PrefixAsked{Shared: 60, Tokens: 100}
				}
				return r
			})}
		}, "warning repeated-prefix [o]", ""},
		{"too few requests to judge", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", MinObserved-1, cycled)}
		}, "", ""},
		{"temperature 0 with repeated prompts", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := cycled(i)
				r.Temperature = &zero
				return r
			})}
		}, "warning repeated-prefix [o]; warning repeated-sampling [o]", ""},
		{"temperature 0 with unique prompts", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := unique(i)
				r.Temperature = &zero
				return r
			})}
		}, "", ""},
		{"one fixed seed with repeated prompts", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := cycled(i)
				r.Seed = &seed
				return r
			}), Ignore: map[string]string{RepeatedPrefix: "measures the cache"}}
		}, "warning repeated-prefix [o] ignored; warning repeated-sampling [o]", "request_id"},
		{"no max_tokens", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Sampled: sampled("o", 100, func(i int) *engine.ChatRequest {
				r := unique(i)
				r.MaxTokens = 0
				return r
			})}
		}, "warning no-max-tokens [o]", "max_tokens"},
		{"the summary's p99 from a short stage", func(*testing.T) Input {
			return Input{Plan: planOf(true, open("o", 2, 10*time.Second, "r1", "r2"))}
		}, "info short-stage [o]", "8m20s"},
		{"a dry run that stopped", func(*testing.T) Input {
			return Input{Plan: planOf(true, long), Profiles: []Profile{{Scenario: "o", Error: "s.lua:3: boom"}}}
		}, "info dry-run [o]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := Check(tt.in(t))
			if got := ids(ls); got != tt.want {
				t.Fatalf("lints = %q, want %q\n%+v", got, tt.want, ls)
			}
			if tt.fixHint != "" && !strings.Contains(ls[0].Fix+ls[0].Message, tt.fixHint) {
				t.Errorf("lint %+v: want %q in its text", ls[0], tt.fixHint)
			}
			for _, l := range ls {
				if l.Message == "" || l.Fix == "" || l.Source != FromPlan || !Known(l.ID) {
					t.Errorf("lint %+v: want a message, a fix, a known id and source plan", l)
				}
			}
		})
	}
}

// TestShortStageThresholds: a threshold's percentile against the requests
// its stages expect — open model, closed model (from the stated E2E
// assumption and the dry run's think time), trace, iterations — with the
// length that would do; a stage filter picks the stages.
func TestShortStageThresholds(t *testing.T) {
	tests := []struct {
		name       string
		plan       plan.Plan
		profiles   []Profile
		sampled    []Tally
		thresholds map[string]string
		want       string
		text       []string
	}{
		{"open p99 of 20 requests", planOf(true, open("o", 2, 10*time.Second, "r1", "r2")),
			nil, nil, map[string]string{"ttft_sched{stage:r2}.p99": "< 1s"},
			"warning short-stage [o/r2]; info short-stage [o]",
			[]string{"≈ 20 requests (stage r2, 2 req/s for 10s)", "a p99 needs 1,000", "r2 ≈ 8m20s", "a p50 needs 20"}},
		{"open p50 of 20 is enough", planOf(true, open("o", 2, 10*time.Second, "r1", "r2")),
			nil, nil, map[string]string{"ttft_sched{stage:r2}.p50": "< 1s"}, "info short-stage [o]", nil},
		{"whole-run threshold sums the stages", planOf(true, open("o", 30, 10*time.Second, "r1", "r2")),
			nil, nil, map[string]string{"ttft.p99": "< 1s"}, "warning short-stage [o]; info short-stage [o]",
			[]string{"≈ 600 requests (stages r1, r2)", "r1 ≈ 17s, r2 ≈ 17s"}},
		{"a whole-run threshold long enough in all", planOf(true, open("o", 60, 10*time.Second, "r1", "r2")),
			nil, nil, map[string]string{"ttft.p99": "< 1s"}, "info short-stage [o]", nil},
		{"a tag filter makes it an upper bound", planOf(true, open("o", 2, 10*time.Second, "r1")),
			nil, nil, map[string]string{"e2e{prompt:long}.p90": "< 1s"}, "warning short-stage [o/r1]; info short-stage [o]",
			[]string{"at most ≈ 20 requests"}},
		{"rates and counters need no percentile samples", planOf(true, open("o", 2, 10*time.Second, "r1")),
			nil, nil, map[string]string{"errors.rate": "< 1%", "requests": "count > 1"}, "info short-stage [o]", nil},
		{"closed model from the assumed E2E and think time", planOf(true, closed("c", 4, time.Minute, "c4")),
			// Two requests an iteration without max_tokens: 256 tokens
			// assumed, E2E 5.32 s; an iteration 2 × 5.32 + 1 = 11.64 s, 4
			// VUs for 60 s ≈ 20.6 iterations, 41 requests.
			[]Profile{{Scenario: "c", Iterations: 10, Requests: 20, Think: 10 * time.Second}},
			sampled("c", 20, func(i int) *engine.ChatRequest { r := unique(i); r.MaxTokens = 0; return r }),
			map[string]string{"e2e.p95": "< 10s"}, "warning no-max-tokens [c]; warning short-stage [c/c4]; info short-stage [c]",
			[]string{"≈ 41 requests", "E2E ≈ 5.3s", "20ms for each of 256 tokens", "1s of think time", "c4 ≈ 5m"}},
		{"closed model without a dry run only informs", planOf(true, closed("c", 4, time.Minute, "c4")),
			// A run's start has no dry run: nothing says what the requests
			// ask for, so the estimate waits for the run's end to warn.
			nil, nil, map[string]string{"e2e.p95": "< 10s"}, "info short-stage [c/c4]; info short-stage [c]",
			[]string{"closed model, assuming E2E"}},
		{"trace records", planOf(true, plan.Scenario{Name: "t", Executor: plan.ExecutorTrace, Exec: "f",
			Stages: []plan.Stage{{Name: "t", Duration: time.Second}}, Trace: &plan.Trace{Arrivals: make([]plan.TraceArrival, 200)}}),
			nil, nil, map[string]string{"ttft_sched.p99": "< 3s"}, "warning short-stage [t/t]; info short-stage [t]",
			[]string{"≈ 200 requests", "≈ 1,000 records", "a p95 needs 200"}},
		{"iterations", planOf(true, plan.Scenario{Name: "i", Executor: plan.ExecutorPerVUIterations, Exec: "f", VUs: 4, Iterations: 5,
			Stages: []plan.Stage{{Name: "i", Duration: time.Minute}}}),
			nil, nil, map[string]string{"ttft.p90": "< 3s"}, "warning short-stage [i/i]; info short-stage [i]",
			[]string{"≈ 20 requests", "≈ 100 iterations"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls := Check(Input{Plan: tt.plan, Profiles: tt.profiles, Sampled: tt.sampled, Thresholds: parse(t, tt.plan, tt.thresholds)})
			if got := ids(ls); got != tt.want {
				t.Fatalf("lints = %q, want %q\n%+v", got, tt.want, ls)
			}
			first := ls[slices.IndexFunc(ls, func(l Lint) bool { return l.ID == ShortStage })]
			for _, want := range tt.text {
				if !strings.Contains(first.Message+" | "+first.Fix, want) {
					t.Errorf("first short-stage lacks %q:\n%s\n%s", want, first.Message, first.Fix)
				}
			}
		})
	}
}

// TestShortStageGate: with a baseline gate its percentiles are warnings,
// per scenario, naming each short stage; a capacity search has its own
// sample rules and is left alone.
func TestShortStageGate(t *testing.T) {
	capacity := plan.Scenario{Name: "c", Executor: plan.ExecutorCapacity, Exec: "f",
		Capacity: &plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Max: 8, Growth: 2}}
	p := planOf(true, open("o", 20, 10*time.Second, "r1", "r2"), capacity)
	ls := Check(Input{Plan: p, Gate: []string{"ttft.p99", "req_per_sec", "e2e.p50"}})
	if got, want := ids(ls), "warning short-stage [o]; info short-stage [o]"; got != want {
		t.Fatalf("lints = %q, want %q", got, want)
	}
	for _, want := range []string{"compares ttft.p99, req_per_sec, e2e.p50", "stages r1 ≈ 200, r2 ≈ 200",
		"1,000 a p99 of ttft needs"} {
		if !strings.Contains(ls[0].Message, want) {
			t.Errorf("gate lint lacks %q: %s", want, ls[0].Message)
		}
	}
	if !strings.Contains(ls[0].Fix, "r1 ≈ 50s, r2 ≈ 50s") {
		t.Errorf("gate fix: %s", ls[0].Fix)
	}
	if ls := Check(Input{Plan: planOf(true, capacity), Gate: []string{"ttft.p99"}}); len(ls) != 0 {
		t.Errorf("capacity only: %q", ids(ls))
	}
}

func stageSummary(sc, st string, n int64, windowS float64) metrics.StageSummary {
	d := metrics.Dist{Count: n}
	return metrics.StageSummary{Scenario: sc, Stage: st, DurationS: windowS, PlannedS: windowS, Iterations: n,
		TTFT: d, E2E: d, TTFTSched: d, TPOT: d}
}

// TestCheckRun: at the end of a run its figures replace the plan's
// estimates — the request rules per stage from what it observed, the
// stage lengths from what it measured, a threshold from the samples it
// judged — and the plan's no-warmup stays.
func TestCheckRun(t *testing.T) {
	p := planOf(false, open("o", 100, 10*time.Second, "r1", "r2"))
	set := parse(t, p, map[string]string{"ttft.p99": "< 1s"})
	// The dry run saw unique prompts; the run's VUs repeat from stage r2 on.
	obs := NewObserver(0)
	for i := range 40 {
		obs.Observe(iter("o", "r1", 1+i%4, int64(i)), unique(i), "")
		obs.Observe(iter("o", "r2", 1+i%4, int64(100+i)), unique(i%10), "")
	}
	in := Input{Plan: p, Thresholds: set, Sampled: sampled("o", 100, unique), Run: &RunFigures{
		Observed:   obs.Tallies(),
		Stages:     []metrics.StageSummary{stageSummary("o", "r1", 300, 10), stageSummary("o", "r2", 1500, 10)},
		Thresholds: []threshold.Result{{Expr: "ttft.p99", Outcomes: []threshold.Outcome{{Agg: metrics.AggP, Samples: 1800}}}},
	}}
	ls := Check(in)
	if got, want := ids(ls), "warning no-warmup; warning repeated-prefix [o/r2]; info short-stage [o]"; got != want {
		t.Fatalf("lints = %q, want %q\n%+v", got, want, ls)
	}
	if l := ls[1]; l.Source != FromRun || !strings.Contains(l.Message, "of stage r2's first requests") {
		t.Errorf("repeated-prefix = %+v", l)
	}
	if l := ls[2]; l.Source != FromRun || !strings.Contains(l.Message, "stage r1 measured ≈ 300 requests") ||
		!strings.Contains(l.Fix, "r1 ≈ 34s") {
		t.Errorf("short-stage = %+v", l)
	}
	// The threshold judged fewer samples than the plan expected.
	in.Run.Thresholds[0].Outcomes[0].Samples = 800
	if ls := Check(in); !strings.Contains(ids(ls), "warning short-stage [o]") ||
		!strings.Contains(ls[2].Message, "judged the p99 of 800 requests") {
		t.Errorf("lints = %q\n%+v", ids(ls), ls)
	}
	// A run that observed too few requests leaves the plan's judgement.
	in.Run.Observed, in.Sampled = nil, sampled("o", 100, cycled)
	if got := ids(Check(in)); !strings.Contains(got, "warning repeated-prefix [o]") {
		t.Errorf("lints = %q, want the plan's repeated-prefix", got)
	}
}

func TestIgnoreAndStrict(t *testing.T) {
	in := Input{Plan: planOf(false, open("o", 200, 10*time.Second, "r1")), Sampled: sampled("o", 100, cycled)}
	ls := Check(in)
	if got := len(Failing(ls)); got != 2 {
		t.Fatalf("failing = %d of %q, want 2", got, ids(ls))
	}
	in.Ignore = map[string]string{NoWarmup: "the server is warm", RepeatedPrefix: "measures the prefix cache"}
	ls = Check(in)
	if f := Failing(ls); len(f) != 0 {
		t.Errorf("failing = %q, want none once ignored", ids(f))
	}
	if ls[0].Ignored != "measures the prefix cache" && ls[1].Ignored != "measures the prefix cache" {
		t.Errorf("ignored lints keep their reason: %+v", ls)
	}
	in.Ignore = nil
	if got, want := StrictReason(Failing(Check(in))), "--strict: 2 lint warnings (no-warmup, repeated-prefix)"; !strings.HasPrefix(got, want) {
		t.Errorf("StrictReason = %q, want %q...", got, want)
	}
}

func TestMinReliableRule(t *testing.T) {
	for p, want := range map[float64]int64{50: 20, 90: 100, 95: 200, 99: 1000, 99.9: 10000, 75: 40} {
		if got := metrics.MinReliable(p); got != want {
			t.Errorf("MinReliable(%g) = %d, want %d", p, got, want)
		}
	}
}
