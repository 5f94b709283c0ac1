package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// cliffServer streams chat completions whose first token comes after
// 10 ms while fewer than five requests are in flight, and after 3 s from
// the fifth on: a server that falls behind within a few arrivals per
// second. Each answer is 40 tokens, 35 ms apart.
func cliffServer(t *testing.T) *httptest.Server {
	t.Helper()
	var inFlight atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"cliff","object":"model"}]}`)
			return
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		ttft := 10 * time.Millisecond
		if n >= 5 {
			ttft = 3 * time.Second
		}
		w.Header().Set("Content-Type", "text/event-stream")
		flush := w.(http.Flusher)
		pause := func(d time.Duration) bool {
			select {
			case <-time.After(d):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		if !pause(ttft) {
			return
		}
		for i := range 40 {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
			flush.Flush()
			if i < 39 && !pause(35*time.Millisecond) {
				return
			}
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":40,\"total_tokens\":48}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
		flush.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// poolScenario sends 4 arrivals a second to one pre-allocated VU, growing
// up to max_vus.
const poolScenario = `
local llm = require("llmload")
options = {
  target = { model = "cliff", tokenizer = "none" },
  scenarios = { open = { executor = "constant-arrival-rate", exec = "ask", rate = 4, duration = "8s",
    arrival = "constant", pre_allocated_vus = 1, max_vus = llm.param("max_vus", 200), graceful_stop = "10s" } },
}
function ask(vu)
  llm.chat { messages = { { role = "user", content = "tell me a story " .. vu.request_id } }, max_tokens = 40 }
end
`

// An open-model run against a server that falls behind: below max_vus the
// pool makes every VU the load needs and drops nothing, and says how many
// it made; at a max_vus too low it drops, and says "at max_vus".
func TestE2EPoolGrowsWithAServerThatFallsBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("two 8 s runs against a scripted server")
	}
	srv := cliffServer(t)
	dir := t.TempDir()
	scenario := writeFile(t, dir, "pool.lua", poolScenario)
	for _, tt := range []struct {
		maxVUs int
		drops  bool
	}{{200, false}, {8, true}} {
		t.Run(fmt.Sprintf("max_vus=%d", tt.maxVUs), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("r%d.json", tt.maxVUs))
			stdout, stderr, code := runBinary(t, nil, "run", scenario, "--target", srv.URL+"/v1", "--out", out,
				"--set", fmt.Sprintf("max_vus=%d", tt.maxVUs))
			if code != 0 {
				t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
			}
			res := loadResult(t, out)
			if len(res.Stages) != 1 || len(res.Pools) != 1 {
				t.Fatalf("%d stages, %d pools; want 1 each", len(res.Stages), len(res.Pools))
			}
			st, pool := res.Stages[0], res.Pools[0]
			t.Logf("max_vus %d: %d iterations, %d dropped (%d at max_vus); pool %+v", tt.maxVUs, st.Iterations, st.DroppedIterations, st.DroppedMaxVUs, pool)
			if pool.PreAllocatedVUs != 1 || pool.MaxVUs != tt.maxVUs || pool.VUs > tt.maxVUs {
				t.Errorf("pool %+v, want 1 pre-allocated, max %d", pool, tt.maxVUs)
			}
			if got, want := st.Iterations+st.DroppedIterations, int64(32); got != want {
				t.Errorf("%d iterations run or dropped, want all %d arrivals", got, want)
			}
			if !tt.drops {
				if st.DroppedIterations != 0 {
					t.Errorf("%d dropped below max_vus, want none:\n%s", st.DroppedIterations, stdout)
				}
				// The server fell behind: 4/s of 4 s answers need about 16 VUs.
				if pool.VUs < 10 || !strings.Contains(stdout, fmt.Sprintf("VUs open: 1 pre-allocated, %d in the end of max 200", pool.VUs)) {
					t.Errorf("made %d VUs, want at least 10, reported in the summary:\n%s", pool.VUs, stdout)
				}
				return
			}
			if st.DroppedIterations == 0 || st.DroppedMaxVUs != st.DroppedIterations || pool.DroppedMaxVUs != st.DroppedIterations || pool.VUs != 8 {
				t.Errorf("dropped %d (%d at max_vus, pool %d), %d VUs; want every drop at max_vus with 8 VUs", st.DroppedIterations,
					st.DroppedMaxVUs, pool.DroppedMaxVUs, pool.VUs)
			}
			if !strings.Contains(stdout, "dropped at max_vus: every VU was busy and the pool was at its cap") {
				t.Errorf("summary does not say the drops were at max_vus:\n%s", stdout)
			}
		})
	}
}
