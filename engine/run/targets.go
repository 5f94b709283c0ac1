package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/balance"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
)

// severalTargets reports whether the plan spreads its load across
// options.targets rather than one target.
func (c *Config) severalTargets() bool { return len(c.Plan.Targets) > 0 }

// simulatedTargets reports whether the built-in simulator serves the
// whole run: no target has a base URL.
func (c *Config) simulatedTargets() bool {
	if !c.severalTargets() {
		return c.Plan.Target.BaseURL == ""
	}
	for _, t := range c.Plan.Targets {
		if t.BaseURL != "" {
			return false
		}
	}
	return true
}

// startTargetSimulators starts a simulator of its own for each of
// options.targets that has no base URL, so that an A/B scenario runs
// anywhere, each side with its own queue and metrics. The servers are
// returned for the caller to close, also on error.
func (c *Config) startTargetSimulators() ([]*sim.Server, error) {
	var servers []*sim.Server
	for i := range c.Plan.Targets {
		t := &c.Plan.Targets[i]
		if t.BaseURL != "" {
			continue
		}
		srv, url, err := c.simulate(t, c.Plan.Seed+int64(i), fmt.Sprintf(" for target %q", t.Name))
		if err != nil {
			return servers, err
		}
		servers = append(servers, srv)
		c.log("target %s has no base_url: running it against a built-in simulator at %s", t.Name, url)
	}
	return servers, nil
}

// connectTargets makes a client for each of options.targets, runs each
// one's preflight (which settles its model) and spreads the load across
// them. One target that fails its preflight fails the run, named: an A/B
// with one side down measures nothing worth comparing.
func (c *Config) connectTargets(ctx context.Context) (engine.Client, func(), error) {
	var clients []*openai.Client
	closeAll := func() {
		for _, cl := range clients {
			cl.CloseIdle()
		}
	}
	targets := make([]balance.Target, 0, len(c.Plan.Targets))
	for i := range c.Plan.Targets {
		t := &c.Plan.Targets[i]
		client, err := c.connectTarget(ctx, t)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		clients = append(clients, client)
		targets = append(targets, balance.Target{Name: t.Name, Weight: t.Weight, Model: t.Model, Client: client})
	}
	b, err := balance.New(c.Plan.Balance, c.Plan.Seed, targets)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return b, closeAll, nil
}

// targetsMeta describes options.targets for the result; nil with one
// target.
func (c *Config) targetsMeta() []result.TargetMeta {
	if !c.severalTargets() {
		return nil
	}
	out := make([]result.TargetMeta, len(c.Plan.Targets))
	for i, t := range c.Plan.Targets {
		out[i] = result.TargetMeta{Name: t.Name, URL: redact.URL(t.BaseURL), Model: t.Model, Weight: t.Weight}
	}
	return out
}

// runnerModel is the model a request that names none asks for: the
// preflight's, or with several targets none, so that each target fills
// in its own.
func (c *Config) runnerModel() string {
	if c.severalTargets() {
		return ""
	}
	return c.Plan.Target.Model
}

// targetsLine is the result's one-line target and model with several
// targets: "a=URL, b=URL" and their models, each once.
func targetsLine(ts []result.TargetMeta) (target, model string) {
	urls := make([]string, len(ts))
	var models []string
	for i, t := range ts {
		urls[i] = t.Name + "=" + t.URL
		if !slices.Contains(models, t.Model) {
			models = append(models, t.Model)
		}
	}
	return strings.Join(urls, ", "), strings.Join(models, ", ")
}

// plainForSimulator drops the TLS and HTTP/2 settings of a target the
// built-in simulator serves, in plain HTTP/1.1, saying so: a scenario
// written for a TLS gateway still runs anywhere.
func plainForSimulator(t plan.Target, log func(string, ...any)) plan.Target {
	if t.TLS == (plan.TLS{}) && !t.HTTP2 && !t.H2C {
		return t
	}
	t.TLS, t.HTTP2, t.H2C = plan.TLS{}, false, false
	name := "the target"
	if t.Name != "" {
		name = "target " + t.Name
	}
	log("%s runs against the built-in simulator, which speaks plain HTTP/1.1: its TLS and HTTP/2 settings are not used", name)
	return t
}
