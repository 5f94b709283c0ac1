package cost

import (
	"fmt"
	"math"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/tokenize"
)

// Sampled is one request a dry run of the script built without sending
// it (luabind's Script.SampleRequests): the scenario and iteration that
// built it, or setup().
type Sampled struct {
	Scenario  string
	Iteration int64
	Setup     bool
	Request   *engine.ChatRequest
}

// ClosedRequestTime is the time per request a closed model's estimate
// assumes: a fast answer. A closed model sends as many requests as the
// server answers, so no plan bounds it.
const ClosedRequestTime = time.Second

// poissonSigmas is how far above the expected count an open model's
// bound reaches: four standard deviations, which a Poisson count passes
// about three times in 100,000 runs.
const poissonSigmas = 4

// WorstCase is the most a plan could spend: per part (the warmup, each
// scenario, setup) the iterations it can run times the dearest iteration
// a dry run sampled, each request at its prompt tokens and max_tokens,
// none of them cached.
type WorstCase struct {
	Cost plan.Cost
	// Tokenizer counted the sampled prompts; "" when none did and their
	// InputBound stood in.
	Tokenizer string
	Parts     []WorstPart
	// Bound is the sum of the bounded parts; Unbounded says some part
	// has no bound, and Estimate is Bound plus those parts' estimates,
	// but for the parts Unestimated names (no request sampled, no
	// max_tokens, capacity searches).
	Bound       float64
	Unbounded   bool
	Estimate    float64
	Unestimated []string
}

// WorstPart is one part of a plan's worst case.
type WorstPart struct {
	Name string // "warmup", "setup" or the scenario's name
	// Iterations bounds the part's iterations, as How says ("∫ rate dt
	// + 4σ", "one per record", ...); 0 when Unbounded says why there is
	// no bound, Estimate being a guess then, as EstimateHow says.
	Iterations  float64
	How         string
	Unbounded   string
	Estimate    float64
	EstimateHow string
	// PerProbe says Estimate is one capacity probe's bound, not the
	// part's.
	PerProbe bool
	// Sampled iterations were the dry run's; the dearest of them sent
	// Requests requests of InputTokens prompt tokens and OutputTokens
	// max_tokens in all, PerIteration at the prices. NoMaxTokens says one
	// of its requests had no max_tokens, so no iteration is bounded.
	Sampled      int
	Requests     int
	InputTokens  int
	OutputTokens int
	PerIteration float64
	NoMaxTokens  bool
	// Worst is Iterations × PerIteration; EstimateCost Estimate ×
	// PerIteration.
	Worst        float64
	EstimateCost float64
}

// iterationWorst is one sampled iteration's requests at their worst.
type iterationWorst struct {
	requests, input, output int
	unbounded               bool
	cost                    float64
}

// Plan computes p's worst case from samples, the requests a dry run
// built, counting prompts with codec (nil: InputBound).
func Plan(p plan.Plan, samples []Sampled, codec tokenize.Codec) WorstCase {
	w := WorstCase{Cost: p.Cost}
	if codec != nil {
		w.Tokenizer = codec.Name()
	}
	iters, setup := w.group(samples, codec)
	if wu := p.Warmup; (wu.Requests > 0 || wu.Duration > 0) && len(p.Scenarios) > 0 {
		sc := p.Scenarios[0] // the warmup runs the first scenario's exec
		w.add(withDearest(warmupPart(sc, wu), iters[sc.Name]))
	}
	for _, sc := range p.Scenarios {
		w.add(withDearest(scenarioPart(sc), iters[sc.Name]))
	}
	if setup.requests > 0 {
		w.add(withDearest(WorstPart{Name: "setup", Iterations: 1, How: "once"}, []iterationWorst{setup}))
	}
	return w
}

// group sums the samples by iteration, per scenario, and setup's apart.
func (w *WorstCase) group(samples []Sampled, codec tokenize.Codec) (map[string][]iterationWorst, iterationWorst) {
	type key struct {
		scenario string
		it       int64
	}
	index := map[key]int{}
	iters := map[string][]iterationWorst{}
	var setup iterationWorst
	for _, s := range samples {
		if s.Request == nil {
			continue
		}
		one := w.request(s.Request, codec)
		if s.Setup {
			setup.addRequest(one)
			continue
		}
		k := key{s.Scenario, s.Iteration}
		i, ok := index[k]
		if !ok {
			i = len(iters[s.Scenario])
			index[k] = i
			iters[s.Scenario] = append(iters[s.Scenario], iterationWorst{})
		}
		iters[s.Scenario][i].addRequest(one)
	}
	return iters, setup
}

// request is one request at its worst: its prompt as codec counts it,
// its OutputBound.
func (w *WorstCase) request(req *engine.ChatRequest, codec tokenize.Codec) iterationWorst {
	in := InputBound(req)
	if codec != nil {
		if req.Raw != nil {
			in = codec.Count(string(req.Raw))
		} else {
			in = PromptTokens(codec, req)
		}
	}
	out, bounded := OutputBound(req)
	return iterationWorst{requests: 1, input: in, output: out, unbounded: !bounded, cost: Worst(w.Cost, in, out)}
}

func (it *iterationWorst) addRequest(r iterationWorst) {
	it.requests += r.requests
	it.input += r.input
	it.output += r.output
	it.unbounded = it.unbounded || r.unbounded
	it.cost += r.cost
}

// withDearest fills the part's tokens from its dearest sampled iteration.
func withDearest(part WorstPart, iters []iterationWorst) WorstPart {
	part.Sampled = len(iters)
	var dearest iterationWorst
	for _, it := range iters {
		part.NoMaxTokens = part.NoMaxTokens || it.unbounded
		if it.cost > dearest.cost || dearest.requests == 0 {
			dearest = it
		}
	}
	part.Requests, part.InputTokens, part.OutputTokens = dearest.requests, dearest.input, dearest.output
	part.PerIteration = dearest.cost
	part.Worst = part.Iterations * part.PerIteration
	part.EstimateCost = part.Estimate * part.PerIteration
	return part
}

// add counts part in the totals.
func (w *WorstCase) add(part WorstPart) {
	w.Parts = append(w.Parts, part)
	switch {
	case part.Sampled == 0 || part.NoMaxTokens || part.PerProbe:
		w.Unbounded = true
		w.Unestimated = append(w.Unestimated, part.Name)
	case part.Unbounded != "":
		w.Unbounded = true
		w.Estimate += part.EstimateCost
	default:
		w.Bound += part.Worst
		w.Estimate += part.Worst
	}
}

// warmupPart bounds the warmup's iterations: warmup.requests, or a
// warmup of a duration on the first scenario's VUs, which is a closed
// model.
func warmupPart(sc plan.Scenario, wu plan.Warmup) WorstPart {
	part := WorstPart{Name: "warmup"}
	if wu.Requests > 0 {
		part.Iterations, part.How = float64(wu.Requests), "options.warmup.requests"
		return part
	}
	vus := max(sc.MaxVUs(), 1)
	part.Unbounded = fmt.Sprintf("a %s warmup on up to %s sends as many requests as the server answers", plan.FormatDuration(wu.Duration), plural(vus, "VU"))
	part.Estimate = float64(vus) * wu.Duration.Seconds() / ClosedRequestTime.Seconds()
	part.EstimateHow = "if each iteration took " + ClosedRequestTime.String()
	return part
}

// scenarioPart bounds a scenario's iterations by its executor.
func scenarioPart(sc plan.Scenario) WorstPart {
	part := WorstPart{Name: sc.Name}
	switch {
	case sc.Capacity != nil:
		return capacityPart(sc, part)
	case sc.Trace != nil:
		part.Iterations, part.How = float64(len(sc.Trace.Arrivals)), "one per record"
	case plan.OpenModel(sc.Executor):
		n := sc.ExpectedArrivals()
		part.Iterations = openBound(sc, n)
		part.How = fmt.Sprintf("∫ rate dt = %.0f, + %dσ of %s arrivals", n, poissonSigmas, arrivalName(sc))
		if sc.Arrival == plan.ArrivalConstant {
			part.How = "∫ rate dt, evenly spaced"
		}
	case sc.Executor == plan.ExecutorSharedIterations:
		part.Iterations, part.How = float64(sc.Iterations), "iterations"
	case sc.Executor == plan.ExecutorPerVUIterations:
		part.Iterations, part.How = float64(sc.VUs*sc.Iterations), "VUs × iterations"
	default:
		vuSeconds := 0.0
		for _, l := range sc.StageLoads() {
			vuSeconds += l.Integral()
		}
		part.Unbounded = fmt.Sprintf("closed model: as many requests as the server answers in %s with up to %s",
			plan.FormatDuration(sc.Duration()), plural(sc.MaxVUs(), "VU"))
		part.Estimate = vuSeconds / ClosedRequestTime.Seconds()
		part.EstimateHow = fmt.Sprintf("%.0f VU-seconds, if each iteration took %s: a fast server; a faster one sends more", vuSeconds, ClosedRequestTime)
	}
	return part
}

// openBound is an open model's iteration count that its random arrivals
// pass only rarely: the expected count n plus poissonSigmas standard
// deviations (√n for Poisson, √(n/shape) for gamma); evenly spaced
// arrivals are n, rounded up, and one.
func openBound(sc plan.Scenario, n float64) float64 {
	switch sc.Arrival {
	case plan.ArrivalConstant:
		return math.Ceil(n) + 1
	case plan.ArrivalGamma:
		if sc.Burstiness > 0 {
			return math.Ceil(n + poissonSigmas*math.Sqrt(n/sc.Burstiness))
		}
	}
	return math.Ceil(n + poissonSigmas*math.Sqrt(n))
}

func arrivalName(sc plan.Scenario) string {
	if sc.Arrival == "" {
		return plan.ArrivalPoisson
	}
	return sc.Arrival
}

// capacityPart says a capacity search cannot be bounded, and what one of
// its probes can send at most.
func capacityPart(sc plan.Scenario, part WorstPart) WorstPart {
	c := sc.Capacity
	probe := c.Warmup + c.MaxWindow
	part.PerProbe = true
	part.Unbounded = "a capacity search runs as many probes as it needs (check's plan above estimates how many)"
	if c.Load == plan.CapacityRate {
		n := c.Max * probe.Seconds()
		part.Estimate = math.Ceil(n + poissonSigmas*math.Sqrt(n))
		part.EstimateHow = fmt.Sprintf("per probe at most, at %g/s for %s", c.Max, plan.FormatDuration(probe))
		return part
	}
	part.Estimate = c.Max * probe.Seconds() / ClosedRequestTime.Seconds()
	part.EstimateHow = fmt.Sprintf("per probe of %g VUs for %s, if each iteration took %s", c.Max, plan.FormatDuration(probe), ClosedRequestTime)
	return part
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
