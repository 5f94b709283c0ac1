package run

import (
	"context"
	"slices"

	"github.com/llmload/llmload/engine/localserver"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/selfcheck"
)

// localServer looks, once before the load starts, for the processes of
// targets that listen on this machine, so that the self-check counts
// their CPU apart from other processes'. It says in one line what it
// found, or why it found nothing for a target on this machine; a remote
// target, or the built-in simulator in this very process, says nothing.
func (c *Config) localServer(ctx context.Context, simulated bool) ([]selfcheck.Option, *result.LocalServer) {
	if simulated {
		return nil, nil
	}
	set, note := localserver.Find(ctx, targetURLs(c.Plan))
	if set == nil {
		if note != "" {
			c.log("local server: %s", note)
		}
		return nil, result.LocalServerFrom(nil, note)
	}
	c.log("local server: %s, on this machine: its CPU is counted apart from other processes'", set)
	return []selfcheck.Option{selfcheck.WithServer(set)}, result.LocalServerFrom(set.Processes(), "")
}

// targetURLs are the base URLs of the plan's target and of its several
// targets, each once.
func targetURLs(p plan.Plan) []string {
	var urls []string
	for _, t := range append([]plan.Target{p.Target}, p.Targets...) {
		if t.BaseURL != "" && !slices.Contains(urls, t.BaseURL) {
			urls = append(urls, t.BaseURL)
		}
	}
	return urls
}
