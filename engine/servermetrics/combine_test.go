package servermetrics

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pts is a series of points, one per round: rounds[i] at t = rounds[i].
func pts(name string, role Role, unit string, rounds []int, v ...float64) Series {
	s := Series{Name: name, Role: role, Unit: unit, V: v, rounds: rounds}
	for _, r := range rounds {
		s.T = append(s.T, float64(r))
	}
	return s
}

// The additive series every endpoint has are summed round by round; a
// round one endpoint missed has no sum, and fractions and latencies are
// never summed.
func TestSums(t *testing.T) {
	waitingA := pts("vllm:num_requests_waiting", RoleWaiting, UnitRequests, []int{0, 1, 2, 3}, 1, 2, 3, 4)
	waitingB := pts("vllm:num_requests_waiting", RoleWaiting, UnitRequests, []int{0, 1, 3}, 10, 20, 40)
	queued := pts("sglang:num_queue_reqs", RoleWaiting, UnitRequests, []int{0, 1, 2, 3}, 5, 5, 5, 5)
	tokensA := pts("vllm:generation_tokens_total:rate", RoleOutputTokens, UnitTokensPerSecond, []int{1, 2}, 100, 120)
	tokensB := pts("vllm:generation_tokens_total:rate", RoleOutputTokens, UnitTokensPerSecond, []int{1, 2}, 50, 60)
	kvA := pts("vllm:kv_cache_usage_perc", RoleKVCache, UnitFraction, []int{0, 1}, 0.2, 0.9)
	kvB := pts("vllm:kv_cache_usage_perc", RoleKVCache, UnitFraction, []int{0, 1}, 0.1, 0.1)
	ttft := pts("vllm:time_to_first_token_seconds:p99", RoleTTFT.P99(), UnitMS, []int{1}, 80)
	tests := []struct {
		name string
		a, b []Series
		want map[string][]float64 // sum name → values
	}{
		{"a missed round has no sum", []Series{waitingA}, []Series{waitingB},
			map[string][]float64{"sum(vllm:num_requests_waiting)": {11, 22, 44}}},
		{"by role across servers", []Series{waitingA}, []Series{queued},
			map[string][]float64{"sum(vllm:num_requests_waiting, sglang:num_queue_reqs)": {6, 7, 8, 9}}},
		{"rates add up", []Series{tokensA, kvA}, []Series{kvB, tokensB},
			map[string][]float64{"sum(vllm:generation_tokens_total:rate)": {150, 180}}},
		{"fractions and latencies never", []Series{kvA, ttft}, []Series{kvB, ttft}, map[string][]float64{}},
		{"only where every endpoint has it", []Series{waitingA, tokensA}, []Series{tokensB},
			map[string][]float64{"sum(vllm:generation_tokens_total:rate)": {150, 180}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sums([]*Result{{Series: tt.a}, {Series: tt.b}})
			if len(got) != len(tt.want) {
				t.Fatalf("sums %v, want %v", seriesNames(got), tt.want)
			}
			for _, s := range got {
				if want, ok := tt.want[s.Name]; !ok || !slices.Equal(s.V, want) {
					t.Errorf("%s = %v, want %v", s.Name, s.V, want)
				}
			}
		})
	}
}

func seriesNames(ss []Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// A sum keeps its parts' role and unit, so that the reports and the
// analysis read it as they read one server's series.
func TestSumSeriesKeepsRole(t *testing.T) {
	a := pts("llamacpp:requests_deferred", "", UnitRequests, []int{0, 1}, 1, 2)
	b := pts("llamacpp:requests_deferred", "", UnitRequests, []int{0, 1}, 3, 4)
	s := sumSeries([]*Series{&a, &b})
	if s.Role != RoleWaiting || s.Unit != UnitRequests || !slices.Equal(s.T, []float64{0, 1}) {
		t.Errorf("sum %+v, want role waiting in requests at t 0, 1", s)
	}
	if !strings.Contains(s.Help, "2 endpoints") {
		t.Errorf("help %q does not say what was summed", s.Help)
	}
}

// A scrape belongs to the round of the schedule nearest to its start, and
// a late one never shares the round of the one before.
func TestRoundAt(t *testing.T) {
	began := time.Unix(1000, 0)
	tests := []struct {
		after time.Duration
		last  int
		want  int
	}{
		{0, -1, 0},
		{1900 * time.Millisecond, 0, 1},
		{2100 * time.Millisecond, 0, 1},
		{5200 * time.Millisecond, 1, 3}, // a round skipped by a slow scrape
		{4100 * time.Millisecond, 2, 3}, // late after a slow one: the next round
	}
	for _, tt := range tests {
		p := &poller{began: began, every: 2 * time.Second, lastRound: tt.last}
		if got := p.roundAt(began.Add(tt.after)); got != tt.want {
			t.Errorf("roundAt(+%v) after round %d = %d, want %d", tt.after, tt.last, got, tt.want)
		}
	}
}

// gauges serves a vLLM exposition of fixed queue gauges and cache use.
func gauges(running, waiting int, kv float64) http.HandlerFunc {
	body := fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} %d\n"+
		"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\"} %d\n"+
		"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine=\"0\"} %g\n", running, waiting, kv)
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }
}

// counted is h, counting the requests it answered.
func counted(h http.HandlerFunc, n *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		n.Add(1)
	}
}

// Two replicas scraped together: each keeps its own series, and their
// queue is summed exactly, their cache use never.
func TestScraperSumsEndpoints(t *testing.T) {
	var na, nb atomic.Int64
	a, b := serve(t, counted(gauges(2, 3, 0.9), &na)), serve(t, counted(gauges(1, 4, 0.1), &nb))
	sc := StartAll([]Endpoint{{URL: a.URL + "/metrics"}, {Target: "b", URL: b.URL + "/metrics", Discovered: true}}, MinEvery, time.Now())
	waitFor(t, "three scrapes of each", func() bool { return na.Load() >= 3 && nb.Load() >= 3 })
	res := sc.Stop()
	if len(res.Endpoints) != 2 || res.URL != "" || res.Server != ServerVLLM {
		t.Fatalf("endpoints %d, url %q, server %q; want 2 vLLM endpoints under no URL", len(res.Endpoints), res.URL, res.Server)
	}
	if e := res.Endpoints[1]; e.URL != b.URL+"/metrics" || e.Target != "b" || !e.Discovered || e.Lookup("vllm:kv_cache_usage_perc") == nil {
		t.Errorf("second endpoint %+v, want b's own, discovered, with its cache use", e)
	}
	if got, want := res.Scrapes, res.Endpoints[0].Scrapes+res.Endpoints[1].Scrapes; got != want {
		t.Errorf("scrapes %d, want the endpoints' %d", got, want)
	}
	for role, want := range map[Role]float64{RoleRunning: 3, RoleWaiting: 7} {
		s := res.ByRole(role)
		if s == nil || len(s.V) < 3 || slices.ContainsFunc(s.V, func(v float64) bool { return v != want }) {
			t.Errorf("%s: %+v, want at least 3 points of %v", role, s, want)
		}
	}
	if s := res.ByRole(RoleKVCache); s != nil {
		t.Errorf("cache use summed into %+v", s)
	}
	if res.Note != "" {
		t.Errorf("note %q, want none", res.Note)
	}
}

// One endpoint's Result is what Start gives, with no Endpoints: files of
// one server read as before.
func TestScraperOneEndpointIsItsOwn(t *testing.T) {
	a := serve(t, gauges(2, 3, 0.5))
	res := StartAll([]Endpoint{{URL: a.URL}}, time.Hour, time.Now()).Stop()
	if res.URL != a.URL || len(res.Endpoints) != 0 || res.Lookup("vllm:kv_cache_usage_perc") == nil {
		t.Errorf("result %+v, want the endpoint's own", res)
	}
	if StartAll(nil, time.Hour, time.Now()) != nil {
		t.Error("no endpoints: a Scraper")
	}
}

// The capacity search's queue reading is the sum over every replica: all
// must have emptied. A replica without queue gauges is left out; one that
// fails is an error naming it.
func TestQueueSumsEndpoints(t *testing.T) {
	busy, idle := serve(t, gauges(2, 3, 0.9)), serve(t, gauges(1, 4, 0.1))
	bare := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("up 1\n")) }))
	down := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusBadGateway) }))
	tests := []struct {
		name             string
		urls             []string
		running, waiting float64
		text, err        string
		is               error
	}{
		{"both", []string{busy.URL, idle.URL}, 3, 7,
			busy.URL + ": vllm:num_requests_running 2, vllm:num_requests_waiting 3; " + idle.URL + ": vllm:num_requests_running 1, vllm:num_requests_waiting 4", "", nil},
		{"one without gauges", []string{busy.URL, bare.URL}, 2, 3,
			busy.URL + ": vllm:num_requests_running 2, vllm:num_requests_waiting 3; " + bare.URL + ": no queue gauge", "", nil},
		{"none with gauges", []string{bare.URL, bare.URL + "/x"}, 0, 0, "", ErrNoQueue.Error(), ErrNoQueue},
		{"one down", []string{busy.URL, down.URL}, 0, 0, "", down.URL + ": HTTP 502 Bad Gateway", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var eps []Endpoint
			for _, u := range tt.urls {
				eps = append(eps, Endpoint{URL: u})
			}
			sc := StartAll(eps, time.Hour, time.Now())
			defer sc.Stop()
			r, err := sc.Queue()
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || (tt.is != nil && !errors.Is(err, tt.is)) {
					t.Errorf("Queue() = %+v, %v; want error %q", r, err, tt.err)
				}
				return
			}
			if err != nil || r.Running != tt.running || r.Waiting != tt.waiting || r.Text != tt.text {
				t.Errorf("Queue() = %+v, %v; want running %v, waiting %v, %q", r, err, tt.running, tt.waiting, tt.text)
			}
		})
	}
}

// Several endpoints: their common kind, and a note when their queue
// gave no sum.
func TestCombine(t *testing.T) {
	kv := pts("vllm:kv_cache_usage_perc", RoleKVCache, UnitFraction, []int{0}, 0.5)
	waiting := pts("vllm:num_requests_waiting", RoleWaiting, UnitRequests, []int{0}, 1)
	queued := pts("sglang:num_queue_reqs", RoleWaiting, UnitRequests, []int{0}, 2)
	tests := []struct {
		name   string
		a, b   Result
		server string
		note   string
	}{
		{"one kind", Result{URL: "a", Scrapes: 1, Server: ServerVLLM, Series: []Series{waiting}},
			Result{URL: "b", Scrapes: 1, Server: ServerVLLM, Series: []Series{waiting}}, ServerVLLM, ""},
		{"two kinds", Result{URL: "a", Scrapes: 1, Server: ServerVLLM, Series: []Series{waiting}},
			Result{URL: "b", Scrapes: 1, Server: ServerSGLang, Series: []Series{queued}}, "", ""},
		{"no queue on one", Result{URL: "a", Scrapes: 1, Server: ServerVLLM, Series: []Series{waiting}},
			Result{URL: "b", Scrapes: 1, Server: ServerVLLM, Series: []Series{kv}}, ServerVLLM,
			"no gauge of running or waiting requests was read from all 2 endpoints in the same scrapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := combine([]*Result{&tt.a, &tt.b})
			if r.Server != tt.server || len(r.Endpoints) != 2 {
				t.Errorf("server %q, %d endpoints; want %q, 2", r.Server, len(r.Endpoints), tt.server)
			}
			if (tt.note == "") != (r.Note == "") || !strings.Contains(r.Note, tt.note) {
				t.Errorf("note %q, want %q", r.Note, tt.note)
			}
		})
	}
}
