package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestChatTimingAccuracy checks the stamps against a server with known
// delays: the role chunk comes at once and must not count, the first token
// after 200 ms, then nine more 20 ms apart. Bounds are generous for a busy
// shared machine; they still catch a TTFT stamped at the role chunk (~0),
// a TPOT over the wrong count, or a timestamp taken per read batch.
func TestChatTimingAccuracy(t *testing.T) {
	writes := []step{{write: roleChunk()}, {wait: 200 * time.Millisecond, write: contentChunk("t0")}}
	for i := 1; i < 10; i++ {
		writes = append(writes, step{wait: 20 * time.Millisecond, write: contentChunk("t")})
	}
	writes = append(writes, steps(0, finishChunk("stop"), usageChunk(12, 10), done())...)
	srv := serve(t, script{steps: writes})
	r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq())
	if r.Err != nil {
		t.Fatalf("Err = %v", r.Err)
	}
	within := func(name string, got, lo, hi time.Duration) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %v, want within [%v, %v]", name, got, lo, hi)
		}
	}
	within("TTFT", r.TTFT, 190*time.Millisecond, 300*time.Millisecond)
	within("TPOT", r.TPOT, 18*time.Millisecond, 40*time.Millisecond)
	if got, want := len(r.ITL), 9; got != want {
		t.Fatalf("len(ITL) = %d, want %d", got, want)
	}
	var sum time.Duration
	for _, d := range r.ITL {
		sum += d
	}
	within("mean ITL", sum/9, 18*time.Millisecond, 40*time.Millisecond)
	if got, want := r.OutputTokens, 10; got != want {
		t.Errorf("OutputTokens = %d, want %d", got, want)
	}
	if got, want := r.TokensSource, engine.TokensFromUsage; got != want {
		t.Errorf("TokensSource = %q, want %q", got, want)
	}
	if !(r.TTFB < r.TTFT && r.TTFT < r.E2E) {
		t.Errorf("want TTFB < TTFT < E2E, got %v, %v, %v", r.TTFB, r.TTFT, r.E2E)
	}
	within("E2E - TTFT", r.E2E-r.TTFT, 9*18*time.Millisecond, 9*40*time.Millisecond)
}

// truthPlan is the answer a truthServer streams: a role chunk at once, the
// first reasoning event after ttft, then reasoning and content events gap
// apart, each carrying tokensPerEvent tokens (stated in per-chunk usage),
// and after one more gap the final chunks and [DONE] in one write.
type truthPlan struct {
	ttft, gap         time.Duration
	reasoning, answer int
	tokensPerEvent    int
}

func (p truthPlan) events() int { return p.reasoning + p.answer }

// duration is how long one answer takes.
func (p truthPlan) duration() time.Duration { return p.ttft + time.Duration(p.events())*p.gap }

// holdAfterDone is how long a truthServer handler waits after flushing
// [DONE] before it returns. Returning sets off net/http's end-of-response
// work (the terminating chunk, stopping the background read, reading the
// next request), which keeps the server goroutine on its CPU at the very
// moment the client should wake for [DONE]. A real server does that work
// on its own machine; here it shares the client's two cores, so without
// the hold the E2E error would measure the test server, not the client.
const holdAfterDone = time.Millisecond

// truthStamps are the server's own monotonic times for one request.
type truthStamps struct {
	text []time.Time // when each text event was written and flushed
	done time.Time   // when the final write, [DONE], was flushed
	// finished is closed once the handler wrote its last stamp: a client
	// may have read [DONE] before the server's clock read after the flush.
	finished chan struct{}
}

// truthServer streams truthPlan answers and records when each event left,
// in the same process as the client, so that server time − Result.Start is
// the true latency of every event on one monotonic clock. The request's
// "truth_id" body member picks its stamps.
type truthServer struct {
	plan   truthPlan
	writes []string // payloads: role, text events, then the end
	stamps []truthStamps
}

func newTruthServer(p truthPlan, requests int) *truthServer {
	s := &truthServer{plan: p, stamps: make([]truthStamps, requests)}
	for i := range s.stamps {
		s.stamps[i] = truthStamps{text: make([]time.Time, p.events()), finished: make(chan struct{})}
	}
	s.writes = append(s.writes, cumChunk("", 0))
	for i := range p.events() {
		field, cum := "content", (i+1)*p.tokensPerEvent
		if i < p.reasoning {
			field = "reasoning_content"
		}
		s.writes = append(s.writes, ev(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{%q:%q},"finish_reason":null}],"usage":{"prompt_tokens":7,"completion_tokens":%d,"total_tokens":%d}}`,
			field, strings.Repeat(" hello", p.tokensPerEvent), cum, cum+7)))
	}
	total := p.events() * p.tokensPerEvent
	s.writes = append(s.writes, finishChunk("stop")+usageChunk(7, total)+done())
	return s
}

func (s *truthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID int `json:"truth_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ID < 0 || body.ID >= len(s.stamps) {
		http.Error(w, "bad truth_id", http.StatusBadRequest)
		return
	}
	st := &s.stamps[body.ID]
	defer close(st.finished)
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	n := len(s.writes)
	for i, payload := range s.writes {
		wait := s.plan.gap
		switch i {
		case 0:
			wait = 0
		case 1:
			wait = s.plan.ttft
		}
		if !sleep(r, wait) {
			return
		}
		if _, err := io.WriteString(w, payload); err != nil || rc.Flush() != nil {
			return
		}
		at := time.Now()
		switch {
		case i == n-1:
			st.done = at
			sleep(r, holdAfterDone)
		case i > 0:
			st.text[i-1] = at
		}
	}
}

// accuracy gathers client − truth errors per metric.
type accuracy struct {
	ttft, ttfc, itl, e2e []time.Duration
}

func (a *accuracy) merge(b *accuracy) {
	a.ttft, a.ttfc = append(a.ttft, b.ttft...), append(a.ttfc, b.ttfc...)
	a.itl, a.e2e = append(a.itl, b.itl...), append(a.e2e, b.e2e...)
}

// compare records the errors of r against the server's stamps, or returns
// why r cannot be compared.
func (a *accuracy) compare(r *engine.Result, st *truthStamps, p truthPlan) error {
	<-st.finished
	if r.Err != nil {
		return r.Err
	}
	if len(r.ITL) != p.events()-1 || len(r.TokenITL) != (p.events()-1)*p.tokensPerEvent {
		return fmt.Errorf("%d ITL and %d TokenITL samples for %d events", len(r.ITL), len(r.TokenITL), p.events())
	}
	a.ttft = append(a.ttft, r.TTFT-st.text[0].Sub(r.Start))
	a.ttfc = append(a.ttfc, r.TTFC-st.text[p.reasoning].Sub(r.Start))
	for i, got := range r.ITL {
		a.itl = append(a.itl, got-st.text[i+1].Sub(st.text[i]))
	}
	a.e2e = append(a.e2e, r.E2E-st.done.Sub(r.Start))
	return nil
}

// runAccuracy sends requests through conc workers and compares each result
// with the truth. Workers start spread over half an answer's duration, so
// that streams are not in lock-step and requests do not all begin or end
// at once: the load is steady, as from independent users.
func runAccuracy(tb testing.TB, p truthPlan, conc, requests int) *accuracy {
	tb.Helper()
	ts := newTruthServer(p, requests)
	srv := serve(tb, ts)
	c := testClient(tb, srv.URL+"/v1", func(c *Config) { c.ContinuousUsage, c.MaxConns = true, conc+8 })
	var next atomic.Int64
	parts := make([]accuracy, conc)
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			time.Sleep(p.duration() / 2 * time.Duration(w) / time.Duration(conc))
			for id := int(next.Add(1) - 1); id < requests; id = int(next.Add(1) - 1) {
				req := chatReq()
				req.Extra = map[string]any{"truth_id": id}
				if err := parts[w].compare(c.Chat(context.Background(), req), &ts.stamps[id], p); err != nil {
					errs <- fmt.Errorf("request %d: %w", id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	all := &accuracy{}
	for i := range parts {
		all.merge(&parts[i])
	}
	return all
}

// absQuantile returns the q-quantile of |d|.
func absQuantile(ds []time.Duration, q float64) time.Duration {
	abs := make([]time.Duration, len(ds))
	for i, d := range ds {
		abs[i] = max(d, -d)
	}
	slices.Sort(abs)
	if len(abs) == 0 {
		return 0
	}
	return abs[min(int(q*float64(len(abs))), len(abs)-1)]
}

// errorBounds are the upper bounds of histogram's buckets.
var errorBounds = []time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond,
	500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}

// histogram draws the distribution of |error| as text.
func histogram(name string, ds []time.Duration) string {
	counts := make([]int, len(errorBounds)+1)
	for _, d := range ds {
		i, _ := slices.BinarySearch(errorBounds, max(d, -d))
		counts[i]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s |error|, %d samples, p50 %v, p99 %v, max %v\n", name, len(ds),
		absQuantile(ds, 0.5), absQuantile(ds, 0.99), absQuantile(ds, 1))
	for i, n := range counts {
		label := "> " + errorBounds[len(errorBounds)-1].String()
		if i < len(errorBounds) {
			label = "≤ " + errorBounds[i].String()
		}
		bar := strings.Repeat("#", (n*50+len(ds)-1)/max(len(ds), 1))
		fmt.Fprintf(&b, "  %8s %6d %s\n", label, n, bar)
	}
	return b.String()
}

// accuracyPlan scales the delays with the concurrency so that the event
// rate stays near 10k/s whatever the concurrency: the client and the
// server share the 2 cores of the test machine.
func accuracyPlan(conc int, perStream time.Duration) truthPlan {
	gap := max(time.Millisecond, perStream*time.Duration(conc))
	return truthPlan{ttft: 2 * gap, gap: gap, reasoning: 4, answer: 16, tokensPerEvent: 2}
}

// TestAccuracy compares the client's TTFT, TTFC, ITL and E2E with the
// server's own clock, at a CI-sized load. The bound is generous for a
// shared machine under -race; BenchmarkAccuracy measures the real figures.
func TestAccuracy(t *testing.T) {
	for _, tt := range []struct{ conc, requests int }{{1, 20}, {50, 100}} {
		t.Run(fmt.Sprintf("c%d", tt.conc), func(t *testing.T) {
			a := runAccuracy(t, accuracyPlan(tt.conc, 400*time.Microsecond), tt.conc, tt.requests)
			for _, m := range []struct {
				name string
				ds   []time.Duration
			}{{"TTFT", a.ttft}, {"TTFC", a.ttfc}, {"ITL", a.itl}, {"E2E", a.e2e}} {
				if got, limit := absQuantile(m.ds, 0.5), 5*time.Millisecond; got > limit {
					t.Errorf("median |%s error| = %v, want below %v", m.name, got, limit)
				}
				t.Log(histogram(m.name, m.ds))
			}
		})
	}
}

// BenchmarkAccuracy measures how far the client's timings are from the
// truth at concurrency 1, 100 and 1,000: each op is one batch of requests
// of 20 events (4 reasoning, 16 answer). It reports the median and p99
// absolute error in µs and logs the error distributions.
func BenchmarkAccuracy(b *testing.B) {
	for _, bb := range []struct{ conc, requests int }{{1, 200}, {100, 1000}, {1000, 1000}} {
		b.Run(fmt.Sprintf("c%d", bb.conc), func(b *testing.B) {
			p := accuracyPlan(bb.conc, 100*time.Microsecond)
			all := &accuracy{}
			for b.Loop() {
				all.merge(runAccuracy(b, p, bb.conc, bb.requests))
			}
			for _, m := range []struct {
				name string
				ds   []time.Duration
			}{{"ttft", all.ttft}, {"ttfc", all.ttfc}, {"itl", all.itl}, {"e2e", all.e2e}} {
				b.ReportMetric(float64(absQuantile(m.ds, 0.5))/1e3, m.name+"_p50_us")
				b.ReportMetric(float64(absQuantile(m.ds, 0.99))/1e3, m.name+"_p99_us")
				b.Log(histogram(m.name, m.ds))
			}
			b.ReportMetric(float64(len(all.itl)+len(all.ttft))/b.Elapsed().Seconds(), "events/s")
		})
	}
}
