package run

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/plan"
)

// repeatingRunner's VUs hand each request to the lints' observer before
// sending it, as luabind's do, and send the same prompt every time.
func repeatingRunner() *fakeRunner {
	r := &fakeRunner{}
	r.iterate = func(ctx context.Context, it engine.Iteration) error {
		req := &engine.ChatRequest{Model: r.deps.Model, MaxTokens: 8,
			Messages: []engine.Message{{Role: "user", Content: "the same prompt"}}}
		if r.deps.Observe != nil {
			r.deps.Observe(&it, req, "")
		}
		res := r.deps.Client.Chat(ctx, req)
		r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: *res})
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	return r
}

// TestRunLints: the run's observer finds the prompts its plan could not
// judge repeating, per stage, and puts the lint in the result (source
// run); --strict turns it into a failed run, which outranks a failed
// threshold's 99 and keeps its reason; without Config.Lints the result has
// none.
func TestRunLints(t *testing.T) {
	tests := []struct {
		name      string
		strict    bool
		threshold string
		verdict   Verdict
		reason    string
	}{
		{"reported", false, "count > 0", Passed, ""},
		{"strict", true, "count > 0", Failed, "--strict: 1 lint warning (repeated-prefix)"},
		{"strict over a failed threshold", true, "count < 1", Failed, "also: some thresholds failed"},
		{"a failed threshold alone", false, "count < 1", GateFailed, "some thresholds failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPlan(300 * time.Millisecond)
			p.Warmup.Requests = 2
			p.Thresholds = []plan.ThresholdSpec{{Expr: "requests", Conditions: []string{tt.threshold}}}
			cfg := testConfig(t, p, repeatingRunner())
			in := lint.Input{Plan: p, Thresholds: cfg.Thresholds}
			if plan := lint.Check(in); len(lint.Failing(plan)) != 0 {
				t.Fatalf("the plan alone should pass: %+v", plan)
			}
			cfg.Lints = &Lints{Input: in, Observer: lint.NewObserver(0), Strict: tt.strict}
			res, out, err := Run(testContext(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != tt.verdict || !strings.Contains(out.Reason, tt.reason) {
				t.Errorf("outcome = %+v, want %v with %q", out, tt.verdict, tt.reason)
			}
			var found bool
			for _, l := range res.Lints {
				found = found || l.ID == lint.RepeatedPrefix && l.Stage == "c2" && l.Source == lint.FromRun && l.Failing()
			}
			if !found {
				t.Errorf("lints = %+v, want the run's repeated-prefix in stage c2", res.Lints)
			}
			if got := readBack(t, cfg.Outputs.Out).Lints; len(got) != len(res.Lints) {
				t.Errorf("result file lints = %+v", got)
			}
		})
	}
	cfg := testConfig(t, testPlan(100*time.Millisecond), repeatingRunner())
	if res, _, err := Run(testContext(t), cfg); err != nil || res.Lints != nil {
		t.Errorf("without Config.Lints: lints %+v, %v", res.Lints, err)
	}
}
