package lint

import (
	"slices"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
)

// Input is what Check judges.
type Input struct {
	Plan       plan.Plan
	Thresholds threshold.Set // the plan's, parsed
	// Gate lists the metrics the baseline gate compares stage by stage
	// ("ttft.p99", ...); nil when the run has no --baseline.
	Gate []string
	// Profiles are what a dry run of each scenario's iterations did, and
	// Sampled the tallies of the requests it built (Source plan).
	Profiles []Profile
	Sampled  []Tally
	// Ignore maps lint ids to the reason options.lints.ignore gives.
	Ignore map[string]string
	// Run is set once a run has ended: what it observed and measured
	// judges again where it has the evidence.
	Run *RunFigures
}

// Profile is what a dry run of one scenario's iterations did.
type Profile struct {
	Scenario string
	// Iterations ran to their end; Requests is how many clean requests
	// they built, of every API.
	Iterations int
	Requests   int
	// Think is the time the iterations asked to sleep (llm.sleep and the
	// think functions), in all; Pace the longest constant_pacing.
	Think time.Duration
	Pace  time.Duration
	// Error is the script error the dry run stopped at, "" when none.
	Error string
}

// RunFigures are what a finished run knows.
type RunFigures struct {
	// Observed are the tallies of each stage's first requests (an
	// Observer's); Stages the measured stages; Thresholds the verdicts, in
	// the order of Input.Thresholds.
	Observed   []Tally
	Stages     []metrics.StageSummary
	Thresholds []threshold.Result
}

// Check runs every rule and returns the lints, warnings first, those that
// Input.Ignore names marked ignored. With Input.Run set, the run's own
// figures replace the plan's estimates where it has them: the request
// rules for each scenario of which it observed at least MinObserved
// requests, the stage lengths once any stage was measured.
func Check(in Input) []Lint {
	ls := noWarmup(in.Plan)
	for _, sc := range in.Plan.Scenarios {
		ls = append(ls, requestLints(sc, scenarioTallies(in.Sampled, sc.Name), FromPlan)...)
		if p := profileOf(in.Profiles, sc.Name); p != nil && p.Error != "" {
			ls = append(ls, dryRunLint(sc.Name, p.Error))
		}
	}
	ls = append(ls, shortStagesPlan(in)...)
	ls = append(ls, startBursts(in.Plan)...)
	if in.Run != nil {
		ls = withRun(in, ls)
	}
	ignore(ls, in.Ignore)
	sortLints(ls)
	return ls
}

// withRun replaces plan lints by the run's where the run has evidence.
func withRun(in Input, ls []Lint) []Lint {
	requestIDs := []string{RepeatedPrefix, RepeatedSampling, NoMaxTokens}
	for _, sc := range in.Plan.Scenarios {
		observed := scenarioTallies(in.Run.Observed, sc.Name)
		if total(observed).Requests < MinObserved {
			continue
		}
		ls = slices.DeleteFunc(ls, func(l Lint) bool {
			return l.Scenario == sc.Name && slices.Contains(requestIDs, l.ID)
		})
		ls = append(ls, requestLints(sc, observed, FromRun)...)
	}
	if len(in.Run.Stages) > 0 {
		ls = slices.DeleteFunc(ls, func(l Lint) bool { return l.ID == ShortStage })
		ls = append(ls, shortStagesRun(in)...)
	}
	return ls
}

// scenarioTallies are the tallies of one scenario, in the order given.
func scenarioTallies(ts []Tally, scenario string) []Tally {
	var out []Tally
	for _, t := range ts {
		if t.Scenario == scenario {
			out = append(out, t)
		}
	}
	return out
}

// total folds a scenario's tallies into one.
func total(ts []Tally) Tally {
	var t Tally
	for _, u := range ts {
		t.add(u)
	}
	if len(ts) > 0 {
		t.Scenario = ts[0].Scenario
	}
	return t
}

func profileOf(ps []Profile, scenario string) *Profile {
	for i := range ps {
		if ps[i].Scenario == scenario {
			return &ps[i]
		}
	}
	return nil
}

// measured says whether a scenario's stages are judged by the stage rules:
// a capacity search sizes its probes by its own sample rules (min_samples,
// extending a window until its intervals decide).
func measured(sc plan.Scenario) bool { return sc.Capacity == nil }

// noWarmup fires when no warmup runs before a plan's measured stages. A
// trace replays its records from the first one (a warmup would run its
// function without a record), and a capacity search warms up before each
// probe: neither needs options.warmup.
func noWarmup(p plan.Plan) []Lint {
	if p.Warmup.Requests > 0 || p.Warmup.Duration > 0 {
		return nil
	}
	first := ""
	for _, sc := range p.Scenarios {
		if measured(sc) && sc.Trace == nil && len(sc.Stages) > 0 && first == "" {
			first = sc.Name + "/" + sc.Stages[0].Name
		}
	}
	if first == "" {
		return nil
	}
	return []Lint{{
		ID: NoWarmup, Severity: Warning, Source: FromPlan,
		Message: "no warmup before the first measured stage (" + first + "): its first requests meet a cold server — " +
			"new connections, empty caches, kernels not yet compiled or captured — and their latency enters the percentiles",
		Fix: `options.warmup = { requests = 10 } (or { duration = "30s" }): run before the first stage and excluded from every figure`,
	}}
}

func dryRunLint(scenario, err string) Lint {
	return Lint{
		ID: DryRun, Severity: Info, Scenario: scenario, Source: FromPlan,
		Message: "the dry run of its iterations stopped at " + err + ": the requests it would send are judged from the run's first requests instead",
		Fix: "nothing if the run's iterations work: the dry run answers every request with a canned success " +
			"(status 200, a short text), which this iteration did not expect",
	}
}
