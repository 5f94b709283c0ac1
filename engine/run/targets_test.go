package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// TestSimulatorDropsTLS: a scenario written for a TLS gateway, run with
// no base URL, runs against the built-in simulator in plain HTTP/1.1 and
// says its TLS and HTTP/2 settings are not used; with several targets,
// each one without a base URL gets a simulator of its own.
func TestSimulatorDropsTLS(t *testing.T) {
	tls := plan.Target{Model: "llmload-sim", TLS: plan.TLS{CACert: "ca.pem", ServerName: "llm.internal"}, HTTP2: true}
	for name, p := range map[string]plan.Plan{
		"one target": func() plan.Plan { p := testPlan(300 * time.Millisecond); p.Target = tls; return p }(),
		"several": func() plan.Plan {
			p := testPlan(300 * time.Millisecond)
			a, b := tls, tls
			a.Name, a.Weight, b.Name, b.Weight = "a", 1, "b", 1
			p.Targets = []plan.Target{a, b}
			return p
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			r := &fakeRunner{}
			r.iterate = func(ctx context.Context, it engine.Iteration) error {
				res := r.deps.Client.Chat(ctx, &engine.ChatRequest{Model: r.deps.Model, MaxTokens: 2,
					Messages: []engine.Message{{Role: "user", Content: "hi"}}})
				r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: *res})
				return nil
			}
			cfg := testConfig(t, p, r)
			cfg.Client = nil
			var logs []string
			cfg.Log = func(format string, a ...any) { logs = append(logs, fmt.Sprintf(format, a...)) }
			res, out, err := Run(testContext(t), cfg)
			if err != nil || out.Verdict != Passed || res.Stages[0].OK == 0 {
				t.Fatalf("err %v, outcome %+v, logs:\n%s", err, out, strings.Join(logs, "\n"))
			}
			if n := strings.Count(strings.Join(logs, "\n"), "its TLS and HTTP/2 settings are not used"); n != max(1, len(p.Targets)) {
				t.Errorf("%d notes of the dropped settings, want one per simulated target:\n%s", n, strings.Join(logs, "\n"))
			}
			if len(p.Targets) > 0 && len(res.Stages[0].ByTarget) != 2 {
				t.Errorf("by target %v, want both simulated targets", res.Stages[0].ByTarget)
			}
		})
	}
}
