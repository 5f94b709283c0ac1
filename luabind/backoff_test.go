package luabind

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/luabind/api"
)

// TestEachVUBacksOffOnItsOwn runs two VUs against a refusing client: each
// waits after its own failures, and the tracker sees them all.
func TestEachVUBacksOffOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeScript(t, "s.lua", `local llm = require("llmload")
options = { vus = 2, duration = "1s" }
function iteration() llm.chat { messages = { { role = "user", content = "hi" } } } end`)
		s := mustCompile(t, path, Options{})
		client := &fakeClient{result: engine.Result{Err: &engine.Error{Class: engine.ErrConnRefused, Message: "refused"}}}
		policy := backoff.Policy{Base: 100 * time.Millisecond, Max: 100 * time.Millisecond}
		tracker := backoff.NewTracker()
		cfg := api.RunnerConfig{Client: client, Backoff: &policy, Reach: tracker}
		a, b := newVU(t, s, cfg, 1), newVU(t, s, cfg, 2)
		start := time.Now()
		for range 3 {
			mustRun(t, a, "iteration")
		}
		mustRun(t, b, "iteration") // b has not failed yet: no wait
		if got, want := time.Since(start), 200*time.Millisecond; got < want || got > want*5/4 {
			t.Errorf("3 iterations of a and 1 of b took %v, want about %v", got, want)
		}
		if got, want := len(client.requests()), 4; got != want {
			t.Errorf("%d requests, want %d", got, want)
		}
		if o := tracker.Outages(time.Now().Add(time.Second)); len(o) != 1 || o[0].Attempts != 4 {
			t.Errorf("outages = %+v, want one of 4 attempts", o)
		}
	})
}
