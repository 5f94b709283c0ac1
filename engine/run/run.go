// Package run runs one plan end to end: the target (the built-in simulator
// when none is set) and its preflight, the collector and per-request files,
// the executor, the live threshold watch, the client's self-check, the
// server-metrics scraper, the result with its analysis, thresholds and
// verdict, and the baseline gate. cmd/llmload drives it from flags; Go
// tests drive it with a fake engine.Runner and a fake or httptest client.
package run

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/engine/traces"
)

// Config is one run of a plan. Plan and NewRunner are required.
type Config struct {
	// Plan is the validated plan; Plan.Script names the scenario in the
	// result, Plan.Target the endpoint (no BaseURL: the simulator).
	Plan plan.Plan
	// NewRunner makes the VUs once the client and the sink exist, e.g.
	// luabind's Script.NewRunner. A Runner that also implements
	// engine.Lifecycle gets its Setup and Teardown called.
	NewRunner func(RunnerDeps) engine.Runner
	// OnUnreachable is what a lost target means for the verdict
	// (verdict.OnUnreachableFail or Warn); "" fails.
	OnUnreachable string
	// Thresholds are the plan's parsed thresholds (see ParseThresholds).
	Thresholds threshold.Set
	// Client, when set, sends the requests as it is: no simulator, no
	// preflight. Nil: an OpenAI-compatible client for Plan.Target, checked
	// by a preflight before any load.
	Client engine.Client
	// Outputs are the files to write.
	Outputs Outputs
	// Summary receives the text summary; nil prints none.
	Summary io.Writer
	// Log receives progress messages, one line each; nil drops them.
	Log func(format string, a ...any)
	// Progress, when set, is started as the executor starts and stopped
	// when it has returned, e.g. to redraw a live progress line.
	Progress func(Live) (stop func())
	// Gate, when set, judges a run that passed everything else against a
	// baseline (see Gate).
	Gate Gate
	// Abort ends the run at once when closed — a second Ctrl-C: Run stops
	// waiting for in-flight requests, setup or teardown, writes what was
	// collected and returns a Failed outcome.
	Abort <-chan struct{}
	// LoadEnded, when set, runs as the load ends, before the results are
	// built: what the process holds then is what the load made it hold
	// (--heap-profile writes its profile there).
	LoadEnded func()
	// Memory, when set, stops the run like an interrupt once the process
	// crosses its bound; the outcome names the script line that was
	// running when it did.
	Memory *memlimit.Watcher
	// Version is llmload's version, kept in the result.
	Version string
	// GPU is the GPU telemetry to read besides the server's metrics
	// (--gpu, --gpu-metrics); its zero value reads none.
	GPU GPUOptions
	// Fingerprint identifies the plan in the result (engine.Plan.Fingerprint),
	// so llmload merge can refuse segments of different runs.
	Fingerprint string
	// PlanParts are what Fingerprint is made of (plan.Parts), kept in the
	// result so that merge can name what differs; nil: only Fingerprint.
	PlanParts *plan.Parts
	// Barrier, when set, decides when the load starts, after VU init,
	// setup and warmup, instead of Plan.StartAt (see executor.StartGate):
	// e.g. engine/barrier's Wait on a shared directory.
	Barrier executor.StartGate
	// Traces describe what the plan's trace scenarios replay (luabind's
	// Script.Traces), kept in the result with the server's hit share
	// beside each.
	Traces []result.Trace
	// Lints, when set, judges the run's good practice into the result's
	// lints (see Lints); nil: the result has none.
	Lints *Lints
	// Spans, when its Listen is set, receives the server's OTLP trace
	// spans and joins each to its request (--otlp-traces-listen).
	Spans Spans

	// checkTraces are the trace ids of the preflights' requests, whose
	// spans the receiver counts apart from the load's.
	checkTraces []string
	// spansLn is the trace receiver's socket, opened before any
	// simulator starts so that each can be pointed at it.
	spansLn net.Listener
	// sims are the built-in simulators the run started.
	sims []*sim.Server
}

// Spans configures the run's trace receiver.
type Spans struct {
	// Listen is the receiver's address (host:port; port 0 picks one);
	// "" runs none.
	Listen string
	// Wait is how long a request waits for its span (0: the joiner's
	// default, 10 s; vLLM's exporter sends a batch every 5 s).
	Wait time.Duration
}

// SegmentSkew is how far apart segments may start before a result says
// so: beyond it, the segments' loads overlap for less than the stage.
const SegmentSkew = 100 * time.Millisecond

// RunnerDeps is what Config.NewRunner gets to make VUs with.
type RunnerDeps struct {
	Client engine.Client
	Sink   engine.Sink
	Model  string          // the model the preflight settled on
	Policy *backoff.Policy // each VU backs off on its own when the target stops answering
	Reach  backoff.Observer
	// Stop ends when the run is interrupted from outside (the ctx given to
	// Run, or the memory bound), but not when a threshold aborts it: setup
	// and teardown should end with it, even a teardown the executor
	// started with a fresh context after the load ended.
	Stop context.Context
	// Observe, when set, is to be called with each request a VU is about
	// to send (api.RunnerConfig's Observe): the lints' observer.
	Observe func(it *engine.Iteration, req *engine.ChatRequest, dirty string)
}

// Live is what a progress display reads while the run goes on.
type Live interface {
	Status() executor.Status
	Live() metrics.Live
}

// Gate compares a finished run with a baseline: failed says why the run
// fails the gate ("" when it passes); err that it could not compare.
type Gate func(res *result.Result) (failed string, err error)

// Verdict is how a run ended, as an exit code sees it.
type Verdict int

// Verdicts, in exit-code order: 0, 1, 99.
const (
	Passed     Verdict = iota // measured, every gate passed
	Failed                    // an error, nothing measured, target lost, interrupted
	GateFailed                // a threshold or the baseline gate failed
)

// Outcome is a run's verdict with its one-line reason ("" when Passed).
type Outcome struct {
	Verdict Verdict
	Reason  string
}

// Run runs cfg's plan: the target and its preflight, then the load, and
// returns the result — also when ctx ends (an interrupt), a threshold
// aborts the run, the memory bound is crossed, or Abort is closed — with
// how the run ended. The error is for what kept the run from producing or
// writing a result (a preflight that failed, an output that cannot be
// opened or written); the result is then nil or not written.
func Run(ctx context.Context, cfg Config) (*result.Result, Outcome, error) {
	if err := executor.CheckSplit(cfg.Plan, cfg.Plan.Segment.Count); err != nil {
		return nil, Outcome{}, err
	}
	simulated := cfg.Client == nil && cfg.simulatedTargets()
	if cfg.Spans.Listen != "" {
		ln, err := traces.ListenTCP(cfg.Spans.Listen)
		if err != nil {
			return nil, Outcome{}, fmt.Errorf("--otlp-traces-listen: %w", err)
		}
		cfg.spansLn = ln
		defer func() {
			if cfg.spansLn != nil { // never served: the run stopped before its load
				cfg.spansLn.Close()
			}
		}()
	}
	switch {
	case cfg.Client != nil:
	case cfg.severalTargets():
		servers, err := cfg.startTargetSimulators()
		for _, srv := range servers {
			defer srv.Close()
		}
		if err != nil {
			return nil, Outcome{}, err
		}
		client, closeIdle, err := cfg.connectTargets(ctx)
		if err != nil {
			return nil, Outcome{}, err
		}
		defer closeIdle()
		cfg.Client = client
	default:
		if simulated {
			srv, err := cfg.startSimulator()
			if err != nil {
				return nil, Outcome{}, err
			}
			defer srv.Close()
		}
		client, err := cfg.connect(ctx)
		if err != nil {
			return nil, Outcome{}, err
		}
		defer client.CloseIdle()
		cfg.Client = client
	}
	return cfg.load(ctx, simulated)
}

// startSimulator starts the built-in simulator and points the plan at it.
func (c *Config) startSimulator() (*sim.Server, error) {
	srv, url, err := c.simulate(&c.Plan.Target, c.Plan.Seed, "")
	if err != nil {
		return nil, err
	}
	c.log("no target set: running against the built-in simulator at %s (set --target or LLMLOAD_BASE_URL for a real server)", url)
	return srv, nil
}

// simulate starts a built-in simulator for t and points t at it (its
// base URL, and its metrics unless it names its own or turned them off).
// The simulator counts prompt tokens with t's tokenizer, so that a run
// without a target shows the token counts and prefix-cache hits the
// scenario's own prompts would have on a server of that tokenizer. what
// names the target in errors ("" for the one target).
func (c *Config) simulate(t *plan.Target, seed int64, what string) (*sim.Server, string, error) {
	cfg := sim.Config{Seed: seed, APIKey: t.APIKey, Model: t.Model, Tokenizer: cmp.Or(t.Tokenizer, plan.DefaultTokenizer)}
	if c.spansLn != nil {
		// The simulator exports its spans to the run's own receiver, as a
		// server started with --otlp-traces-endpoint would.
		cfg.OTLPTracesEndpoint = "http://" + dialable(c.spansLn.Addr())
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", fmt.Errorf("built-in simulator%s: %w", what, err)
	}
	srv := sim.New(cfg)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("start built-in simulator%s: %w", what, err)
	}
	c.sims = append(c.sims, srv)
	t.BaseURL = url
	*t = plainForSimulator(*t, c.log)
	if t.MetricsURL == "" && !t.NoMetrics {
		t.MetricsURL = strings.TrimSuffix(url, "/v1") + "/metrics"
	}
	return srv, url, nil
}

// connect makes the client for the plan's target and runs its preflight,
// which settles the model.
func (c *Config) connect(ctx context.Context) (*openai.Client, error) {
	return c.connectTarget(ctx, &c.Plan.Target)
}

// connectTarget makes the client for t and runs its preflight, which
// settles t's model. Errors name the target: its options.targets entry,
// or for the one target where its settings come from.
func (c *Config) connectTarget(ctx context.Context, t *plan.Target) (*openai.Client, error) {
	where, preflight := "target (--target and its flags, LLMLOAD_BASE_URL or options.target): ", ""
	label := "target " + redact.URL(t.BaseURL)
	if t.Name != "" {
		where = fmt.Sprintf("target %q (options.targets.%s): ", t.Name, t.Name)
		preflight, label = where, "target "+t.Name+" at "+redact.URL(t.BaseURL)
	}
	// A VU's llm.parallel branches each hold a connection: keep theirs
	// idle between fan-outs too (the pool only caps idle connections).
	client, err := openai.New(openai.FromTarget(*t, maxVUs(c.Plan)*plan.DefaultMaxBranches+4))
	if err != nil {
		return nil, fmt.Errorf("%s%w", where, err)
	}
	info, err := client.Preflight(ctx, t.Model, c.Plan.APIs...)
	if err != nil {
		client.CloseIdle()
		return nil, fmt.Errorf("%spreflight failed, no load sent: %w", preflight, err)
	}
	t.Model = info.Model
	c.checkTraces = append(c.checkTraces, info.TraceIDs...)
	ok := fmt.Sprintf("preflight ok in %v", info.Latency.Round(time.Millisecond))
	if info.Retried != "" {
		ok = "preflight retried: " + info.Retried // a busy server: worth knowing before the load
	}
	c.log("%s, model %s: %s", label, info.Model, ok)
	return client, nil
}

func (c *Config) log(format string, a ...any) {
	if c.Log != nil {
		c.Log(format, a...)
	}
}

func maxVUs(p plan.Plan) int {
	n := 0
	for _, s := range p.Scenarios {
		n += s.MaxVUs()
	}
	return n
}

// dialable is addr as a client on this machine reaches it: a listener on
// every address is reached on loopback.
func dialable(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && (a.IP == nil || a.IP.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	return addr.String()
}
