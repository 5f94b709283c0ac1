package api

import (
	"context"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
)

// RunnerConfig is what VUs need beyond the script.
type RunnerConfig struct {
	// Client sends llm.chat and llm.complete requests.
	Client engine.Client
	// Sink receives a sample per request, a "checks" metric sample per
	// llm.check entry and the custom metrics' values; nil drops them.
	Sink engine.Sink
	// Model is used when a request table names none.
	Model string
	// Backoff, when set, makes each VU wait after a request that got no
	// response at all before its next one (see engine/backoff), so VUs do
	// not loop hot against a target that stopped answering. Setup and
	// teardown do not back off: they send once.
	Backoff *backoff.Policy
	// Reach, when set, is told every VU request's outcome, e.g. a
	// backoff.Tracker that records the run's outages.
	Reach backoff.Observer
	// Stop, when set, also ends setup() and teardown() as it ends (an
	// interrupt, the memory bound), even a teardown the executor started
	// with a fresh context after the load ended.
	Stop context.Context
	// Observe, when set, is called with every request just before it is
	// sent: the iteration sending it (nil in setup() and teardown()), the
	// request as it goes out, and its dirty-data kind ("" for a clean
	// one). It is called from every VU's goroutine at once, so it must be
	// safe for concurrent use, and quick: it runs inside the iteration,
	// before t0. lint.Observer's Observe is one.
	Observe func(it *engine.Iteration, req *engine.ChatRequest, dirty string)

	// Dry, set by DryRun, makes every sleep return at once, noting how
	// long it asked for.
	Dry *DryState
}

// DryState is what a dry run's sleeps asked for.
type DryState struct {
	Think time.Duration // in all
	Pace  time.Duration // the longest constant_pacing
}
