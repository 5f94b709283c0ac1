package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/llmload/llmload/engine/compare"
	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/report"
	enginerun "github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/luabind"
)

// strictUsage documents --strict, shared by check and run.
const strictUsage = "exit 1 on a lint warning (good-practice checks: docs/scenarios.md \"Good practice, checked\");\n" +
	"run: before any load for the plan's, at the end for those the run finds"

// dryRunTimeout bounds check's dry run in all.
const dryRunTimeout = 10 * time.Second

// dryRun runs the scenario's iterations dry, sending nothing: the
// requests check's lints and worst-case spend judge the plan by. An
// iteration stuck where Lua cannot be interrupted (a pattern that
// backtracks for hours ignores every deadline) is left behind once the
// bound has passed — check exits right after — and each scenario then
// says it could not be judged from a dry run. Only run does not do this:
// it judges the requests it sends.
func dryRun(ctx context.Context, script *luabind.Script, p plan.Plan) (luabind.DryRun, error) {
	dctx, cancel := context.WithTimeout(ctx, dryRunTimeout)
	defer cancel()
	type outcome struct {
		dry luabind.DryRun
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		dry, err := script.DryRun(dctx, 0)
		done <- outcome{dry, err}
	}()
	select {
	case o := <-done:
		switch {
		case o.err == nil:
			return o.dry, nil
		case ctx.Err() != nil:
			return o.dry, fmt.Errorf("dry run of the scenario: %w", o.err)
		}
	case <-time.After(dryRunTimeout + time.Second):
	}
	stuck := luabind.DryRun{}
	for _, sc := range p.Scenarios {
		stuck.Profiles = append(stuck.Profiles, lint.Profile{Scenario: sc.Name,
			Error: fmt.Sprintf("the dry run did not finish within %v (an iteration slow or stuck in code that ignores the deadline)", dryRunTimeout)})
	}
	return stuck, nil
}

// planLints judges the plan from its dry run: the lint input a run judges
// again at its end, and the plan's lints. gate lists the baseline gate's
// metrics (nil: no gate).
func planLints(dry luabind.DryRun, script *luabind.Script, p plan.Plan, set threshold.Set, gate []string) (lint.Input, []lint.Lint) {
	in := lint.Input{Plan: p, Thresholds: set, Gate: gate, Profiles: dry.Profiles, Sampled: dry.Tallies(),
		Ignore: script.LintIgnores()}
	return in, lint.Check(in)
}

// printLints writes the plan's lints, after a blank line, if any.
func printLints(w io.Writer, ls []lint.Lint) error {
	if len(ls) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return report.Lints(ls)(w)
}

// strictError is --strict's verdict on lints: an error (exit 1) when one
// is a warning not ignored.
func strictError(strict bool, ls []lint.Lint) error {
	if failing := lint.Failing(ls); strict && len(failing) > 0 {
		return fmt.Errorf("%s", lint.StrictReason(failing))
	}
	return nil
}

// runLints judges a run's plan before any load: it prints the lints
// (unless --quiet: the summary lists them at the end) and, with --strict,
// stops the run on a warning. The run judges again at its end from the
// requests it observed and the stages it measured.
func runLints(script *luabind.Script, p plan.Plan, set threshold.Set, f *runFlags,
	stderr io.Writer) (*enginerun.Lints, error) {
	var gate []string
	if f.baseline != "" {
		gate = f.gate.metrics
		if len(gate) == 0 {
			gate = compare.DefaultMetrics
		}
	}
	// No dry run here: a run judges requests from the ones it sends, so
	// an iteration that is slow, stuck or eats memory meets the run's own
	// bounds (graceful stop, a second Ctrl-C, --max-memory naming its
	// line) instead of stopping the run before it measured anything.
	in, lints := planLints(luabind.DryRun{}, script, p, set, gate)
	if !f.quiet {
		if err := report.Lints(lints)(stderr); err != nil {
			return nil, err
		}
	}
	if err := strictError(f.strict, lints); err != nil {
		return nil, fmt.Errorf("%w; nothing was sent", err)
	}
	return &enginerun.Lints{Input: in, Observer: lint.NewObserver(0), Strict: f.strict}, nil
}
