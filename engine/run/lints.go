package run

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/result"
)

// Lints is a run's good-practice check: the plan's findings, the first
// requests of each stage and, at the end, the measured stages.
type Lints struct {
	// Input is what the plan's lints were judged from (the caller ran
	// lint.Check on it before the run); the run adds its own figures.
	Input lint.Input
	// Observer, when set, is handed to the VUs (RunnerDeps.Observe) to
	// keep each stage's first requests.
	Observer *lint.Observer
	// Strict fails the run (exit 1) when a lint found at its end is a
	// warning not ignored; the caller stops a run whose plan already has
	// one before any load.
	Strict bool
}

// observe is the hook the VUs call before each request, nil without an
// observer.
func (c *Config) observe() func(*engine.Iteration, *engine.ChatRequest, string) {
	if c.Lints == nil || c.Lints.Observer == nil {
		return nil
	}
	return c.Lints.Observer.Observe
}

// finalLints judges the plan again with what the run observed and
// measured: the result's lints. Nil without Config.Lints.
func (c *Config) finalLints(res *result.Result) []lint.Lint {
	if c.Lints == nil {
		return nil
	}
	in := c.Lints.Input
	in.Run = &lint.RunFigures{Stages: res.Stages, Thresholds: res.Thresholds}
	if c.Lints.Observer != nil {
		in.Run.Observed = c.Lints.Observer.Tallies()
	}
	return lint.Check(in)
}

// strict fails an outcome that --strict's lints fail: exit 1 outranks a
// threshold's or the gate's 99 (a gate judged on a flawed test is no
// verdict), and an outcome that failed already keeps its own reason.
func (c *Config) strict(res *result.Result, out Outcome) Outcome {
	if c.Lints == nil || !c.Lints.Strict || out.Verdict == Failed {
		return out
	}
	failing := lint.Failing(res.Lints)
	if len(failing) == 0 {
		return out
	}
	reason := lint.StrictReason(failing)
	if out.Verdict == GateFailed {
		reason += "; also: " + out.Reason
	}
	return Outcome{Failed, reason}
}
