package luabind

import (
	"context"
	"fmt"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
)

// DefaultDryRunIterations is how many iterations of each scenario a dry
// run samples unless told otherwise: enough for the lints to tell a
// pool that cycles from one that does not.
const DefaultDryRunIterations = 100

// DryRunIterationTimeout bounds one iteration of a dry run. Sleeps return
// at once there, so only a script that computes for that long (or loops
// forever) reaches it.
const DryRunIterationTimeout = 2 * time.Second

// maxDryRequests bounds the requests one dry-run iteration may build: an
// iteration that loops on llm.chat until told to stop would otherwise
// send until its timeout.
const maxDryRequests = 200

// SampledRequest is one request a dry run built without sending it.
type SampledRequest struct {
	// Scenario, Stage, VU and Iteration say which iteration built it
	// (Iteration 0-based); all are empty or 0 for a request of setup().
	Scenario  string
	Stage     string
	VU        int
	Iteration int64
	// Setup marks a request that setup() sent.
	Setup bool
	// Request is the request as it would have gone out (after a dirty-data
	// kind malformed it, when Dirty says one did). It is the caller's.
	Request *engine.ChatRequest
	// Dirty is the dirty-data kind that malformed it, "" for a clean one.
	Dirty string
}

// DryRun is what running a script's iterations without sending anything
// found: every request they built, and what each scenario's iterations
// did (for the lints: requests per iteration, think time, errors).
type DryRun struct {
	Requests []SampledRequest
	// Profiles has one entry per scenario, in the plan's order.
	Profiles []lint.Profile
	// SetupError is the error setup() raised against the canned answers,
	// "" when it ran or there is none; the iterations then ran without
	// its data.
	SetupError string
}

// SampleRequests returns the requests that perScenario iterations of each
// scenario build, sending nothing: DryRun's Requests.
func (s *Script) SampleRequests(ctx context.Context, perScenario int) ([]SampledRequest, error) {
	d, err := s.DryRun(ctx, perScenario)
	return d.Requests, err
}

// DryRun runs up to perScenario iterations of each scenario's exec
// (DefaultDryRunIterations when ≤ 0) in one VU that sends nothing: every
// request gets a canned success — status 200, a short text, max_tokens
// output tokens, a tool call where a tool is offered and the user spoke
// last — so scripts that read res.text or res.status go on; llm.sleep
// and the think functions return at once (their time is noted); each
// iteration is bounded by DryRunIterationTimeout. setup() runs first,
// against the same canned answers, and its data reaches the iterations;
// teardown() does not run. Iterations get the scenario's stages in
// order (contiguous blocks of the samples), a trace scenario's its first
// records, and at most the iterations the plan runs for the iteration
// executors. A script error stops that scenario's sampling and is kept
// in its Profile, not returned; the error is for ctx ending or a VU that
// cannot be made.
func (s *Script) DryRun(ctx context.Context, perScenario int) (DryRun, error) {
	if perScenario <= 0 {
		perScenario = DefaultDryRunIterations
	}
	rec := &dryRecorder{dry: &api.DryState{}}
	r := vm.NewRunner(s.Program, api.RunnerConfig{Client: rec, Model: s.plan.Target.Model, Observe: rec.observe, Dry: rec.dry})
	var out DryRun
	if err := r.Setup(ctx); err != nil {
		if ctx.Err() != nil {
			return out, err
		}
		out.SetupError = err.Error()
	}
	defer r.CloseLifecycle()
	for _, sc := range s.plan.Scenarios {
		p, err := s.dryScenario(ctx, r, rec, sc, perScenario)
		if err != nil {
			return out, err
		}
		out.Profiles = append(out.Profiles, p)
	}
	out.Requests = rec.requests
	return out, nil
}

// dryScenario samples one scenario's iterations in a VU of its own.
func (s *Script) dryScenario(ctx context.Context, r *vm.Runner, rec *dryRecorder, sc plan.Scenario, n int) (lint.Profile, error) {
	p := lint.Profile{Scenario: sc.Name}
	v, err := r.NewVU(ctx, 1)
	if err != nil {
		if ctx.Err() != nil {
			return p, err
		}
		p.Error = err.Error()
		return p, nil
	}
	defer v.Close()
	n = dryIterations(sc, n)
	dry := rec.dry
	*dry = api.DryState{}
	for i := range n {
		it := engine.Iteration{Scenario: sc.Name, Stage: dryStage(sc, i, n), Exec: sc.Exec, VUID: 1,
			Iteration: int64(i), RequestID: int64(i) + 1}
		if sc.Trace != nil {
			it.Trace = &sc.Trace.Arrivals[i]
		}
		err := rec.iteration(ctx, v, it)
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		if err != nil {
			p.Error = err.Error()
			break
		}
		p.Iterations++
	}
	p.Requests, p.Think, p.Pace = rec.clean[sc.Name], dry.Think, dry.Pace
	return p, nil
}

// dryIterations is how many iterations a dry run samples: n, but no more
// than a trace has records or an iterations executor runs.
func dryIterations(sc plan.Scenario, n int) int {
	switch {
	case sc.Trace != nil:
		return min(n, len(sc.Trace.Arrivals))
	case sc.Executor == plan.ExecutorSharedIterations:
		return min(n, sc.Iterations)
	case sc.Executor == plan.ExecutorPerVUIterations:
		return min(n, sc.VUs*sc.Iterations)
	}
	return n
}

// dryStage is the stage of sample i of n: the stages in order, in equal
// blocks, as a run meets them; a capacity search's first probe window.
func dryStage(sc plan.Scenario, i, n int) string {
	if len(sc.Stages) == 0 {
		if sc.Capacity != nil {
			return "probe-01"
		}
		return ""
	}
	return sc.Stages[i*len(sc.Stages)/n].Name
}

// errTooManyDryRequests ends a dry-run iteration that builds more
// requests than maxDryRequests.
var errTooManyDryRequests = fmt.Errorf("the iteration built more than %d requests (does it loop until the run stops?)", maxDryRequests)

// dryRecorder is a dry run's engine.Client and Observe hook: it keeps
// every request and answers it with a canned success. Used by the dry
// run's one goroutine.
type dryRecorder struct {
	requests []SampledRequest
	clean    map[string]int // scenario → clean requests its iterations built
	sent     int            // requests of the current iteration
	cancel   context.CancelCauseFunc
	dry      *api.DryState // the runner's, reset per scenario
}

// iteration runs one iteration of v under the dry run's bounds.
func (rec *dryRecorder) iteration(ctx context.Context, v engine.VU, it engine.Iteration) error {
	ictx, cancel := context.WithTimeout(ctx, DryRunIterationTimeout)
	defer cancel()
	ictx, rec.cancel = context.WithCancelCause(ictx)
	defer rec.cancel(nil)
	rec.sent = 0
	// An iteration cut by either bound says so: its error wraps the cause.
	return v.RunIteration(ictx, it)
}

func (rec *dryRecorder) observe(it *engine.Iteration, req *engine.ChatRequest, dirty string) {
	cp := *req
	cp.Messages = append([]engine.Message(nil), req.Messages...)
	sr := SampledRequest{Request: &cp, Dirty: dirty, Setup: it == nil}
	if it != nil {
		sr.Scenario, sr.Stage, sr.VU, sr.Iteration = it.Scenario, it.Stage, it.VUID, it.Iteration
		if dirty == "" {
			if rec.clean == nil {
				rec.clean = map[string]int{}
			}
			rec.clean[it.Scenario]++
		}
		if rec.sent++; rec.sent > maxDryRequests && rec.cancel != nil {
			rec.cancel(errTooManyDryRequests)
		}
	}
	rec.requests = append(rec.requests, sr)
}

// Chat answers every request with a canned success, at once.
func (rec *dryRecorder) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	if ctx.Err() != nil {
		return &engine.Result{Start: time.Now(), NotSent: true,
			Err: &engine.Error{Class: engine.ErrCanceled, Message: "dry run: iteration stopped"}}
	}
	return cannedResult(req)
}

// cannedResult is a dry run's answer: a success with plausible figures,
// never a real measurement (nothing of a dry run is recorded).
func cannedResult(req *engine.ChatRequest) *engine.Result {
	api := req.Endpoint
	if api == "" {
		api = engine.EndpointChat
	}
	res := &engine.Result{Start: time.Now(), API: api, Status: 200, Streamed: !req.NoStream,
		TTFB: time.Millisecond, E2E: 2 * time.Millisecond, TokensSource: engine.TokensFromUsage,
		InputTokens: promptBytes(req)/4 + 1, InputTokensSource: engine.TokensFromUsage}
	if api == engine.EndpointEmbeddings {
		res.Inputs, res.Dimensions, res.Streamed = max(len(req.Inputs), 1), 8, false
		return res
	}
	if api == engine.EndpointSpeech {
		res.Streamed, res.AudioOut, res.AudioBytes = false, 1, 32044
		return res
	}
	if req.Audio != nil {
		res.AudioIn, res.Audios = req.Audio.Seconds, 1
	}
	res.OutputTokens = req.MaxTokens
	if res.OutputTokens <= 0 {
		res.OutputTokens = 16
	}
	res.TTFT, res.TTFC, res.TPOT = time.Millisecond, time.Millisecond, time.Millisecond/10
	res.Text, res.FinishReason = "(dry run: nothing was sent)", "stop"
	if name := dryToolCall(req); name != "" {
		res.Text, res.FinishReason = "", "tool_calls"
		res.ToolCalls = []engine.ToolCall{{ID: "call_dryrun_1", Name: name, Arguments: "{}"}}
	}
	return res
}

func promptBytes(req *engine.ChatRequest) int {
	n := len(req.System) + len(req.Prompt)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, p := range m.Parts {
			n += len(p.Text)
		}
	}
	for _, in := range req.Inputs {
		n += len(in)
	}
	return n
}

// dryToolCall is the tool a canned answer calls, as the built-in
// simulator would: the first tool, when tools are offered, tool_choice
// is not "none" and the user (not a tool's result) spoke last.
func dryToolCall(req *engine.ChatRequest) string {
	if len(req.Tools) == 0 || req.ToolChoice == "none" || len(req.Messages) == 0 ||
		req.Messages[len(req.Messages)-1].Role != "user" {
		return ""
	}
	tool, _ := req.Tools[0].(map[string]any)
	if fn, ok := tool["function"].(map[string]any); ok {
		tool = fn
	}
	if name, ok := tool["name"].(string); ok && name != "" {
		return name
	}
	return "tool"
}

// Tallies are the dry run's iteration requests as the lints' request
// rules read them, per scenario and stage.
func (d DryRun) Tallies() []lint.Tally {
	obs := lint.NewObserver(len(d.Requests))
	for _, r := range d.Requests {
		if r.Setup {
			continue
		}
		it := engine.Iteration{Scenario: r.Scenario, Stage: r.Stage, VUID: r.VU, Iteration: r.Iteration}
		obs.Observe(&it, r.Request, r.Dirty)
	}
	return obs.Tallies()
}
