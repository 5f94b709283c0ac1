package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	enginerun "github.com/llmload/llmload/engine/run"
)

// parseHistory reads --history, --label and the history baseline's flags.
func (f *runFlags) parseHistory(noBaselineSet bool, getenv func(string) string) error {
	if err := f.history.parse("run", getenv); err != nil {
		return err
	}
	labels, err := history.ParseLabels("--baseline-label", f.baselineLabels)
	if err != nil {
		return usagef("run: %v", err)
	}
	f.baselineFilter = labels
	if !history.IsBaselineSpec(f.baseline) {
		switch {
		case len(f.baselineLabels) > 0:
			return usagef("run: --baseline-label has no effect without --baseline history:last or history:median:N")
		case noBaselineSet:
			return usagef("run: --no-baseline has no effect without --baseline history:last or history:median:N")
		}
		return nil
	}
	if f.historyBase, err = history.ParseBaseline(f.baseline); err != nil {
		return usagef("run: %v", err)
	}
	if f.history.dsn == "" {
		return usagef("run: --baseline %s reads the history: give --history DSN (or LLMLOAD_HISTORY)", f.baseline)
	}
	if f.noBaseline != "pass" && f.noBaseline != "fail" {
		return usagef("run: --no-baseline %q: want pass or fail", f.noBaseline)
	}
	return nil
}

// historyFilter selects the runs a history baseline pools: this plan's
// (its fingerprint without the seed), of model when the run names one,
// with the --baseline-label labels.
func (f *runFlags) historyFilter(parts plan.Parts, model string) history.Filter {
	parts.Seed = 0
	return history.Filter{Fingerprint: parts.Fingerprint(), Model: model, Labels: maps.Clone(f.baselineFilter)}
}

// historyGate is the gate of --baseline history:…: it pools the
// baseline when the run ends (the model the server chose is known then)
// from the runs stored before this one. Before the load, it checks the
// history holds a run of this plan at all, and with --no-baseline fail
// refuses to run without one.
func (f *runFlags) historyGate(st *history.Store, parts plan.Parts, planModel string, stdout io.Writer) (enginerun.Gate, error) {
	opts, err := f.gate.options()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	_, _, err = st.Baseline(ctx, history.BaselineSpec{Runs: 1}, f.historyFilter(parts, planModel))
	if errors.Is(err, history.ErrNoBaseline) && f.noBaseline == "fail" {
		return nil, fmt.Errorf("run: --baseline %s: %s holds no passed, complete run of this plan%s yet (--no-baseline fail)",
			f.baseline, st.Source(), labelNote(f.baselineFilter))
	}
	if err != nil && !errors.Is(err, history.ErrNoBaseline) {
		return nil, err
	}
	return func(res *result.Result) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		base, runs, err := st.Baseline(ctx, f.historyBase, f.historyFilter(parts, res.Run.Model))
		if errors.Is(err, history.ErrNoBaseline) {
			msg := fmt.Sprintf("no baseline yet: %s holds no passed, complete run of this plan%s", st.Source(), labelNote(f.baselineFilter))
			if f.noBaseline == "fail" {
				return "", errors.New(msg + " (--no-baseline fail)")
			}
			fmt.Fprintf(stdout, "\n%s: the gate is skipped; this run will be the first (--no-baseline fail makes this exit 1)\n", msg)
			return "", nil
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintln(stdout)
		err = gate(base, res, history.Describe(f.historyBase, runs, st.Source()), "this run", opts, &f.gate, stdout)
		var ge *gateError
		if errors.As(err, &ge) {
			return ge.msg, nil
		}
		return "", err
	}, nil
}

// labelNote says which labels a baseline had to have.
func labelNote(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " labelled " + history.FormatLabels(labels)
}
