package traces

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
)

// collector records what a Joiner passes on.
type collector struct {
	mu  sync.Mutex
	out []engine.Sample
}

func (c *collector) next(s engine.Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out = append(c.out, s)
}

func (c *collector) samples() []engine.Sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]engine.Sample(nil), c.out...)
}

func traceHex(i int) string { return fmt.Sprintf("%032x", i+1) }
func spanHex(i int) string  { return fmt.Sprintf("%016x", i+1) }

func traceIDOf(i int) TraceID {
	t, ok := ParseTraceID(traceHex(i))
	if !ok {
		panic(traceHex(i))
	}
	return t
}

func spanIDOf(i int) (s SpanID) {
	binary.BigEndian.PutUint64(s[:], uint64(i+1))
	return s
}

func sampleOf(i int, requestID string) engine.Sample {
	return engine.Sample{Stage: "s", Result: engine.Result{TraceID: traceHex(i), RequestID: requestID}}
}

func spanOf(traceI, spanI int, requestID string, queue time.Duration) Span {
	s := absent()
	s.RequestID, s.Queue = requestID, queue
	return Span{TraceID: traceIDOf(traceI), SpanID: spanIDOf(spanI), Server: s}
}

func TestJoinOrders(t *testing.T) {
	tests := map[string]struct {
		spanFirst bool
		sampleReq string
		span      Span
		byReq     int64
	}{
		"sample before span":            {span: spanOf(0, 0, "r0", time.Millisecond)},
		"span before sample":            {spanFirst: true, span: spanOf(0, 0, "r0", time.Millisecond)},
		"by request id, sample first":   {sampleReq: "r0", span: spanOf(99, 0, "r0", time.Millisecond), byReq: 1},
		"by request id, span first":     {spanFirst: true, sampleReq: "r0", span: spanOf(99, 0, "r0", time.Millisecond), byReq: 1},
		"trace id wins over request id": {sampleReq: "other", span: spanOf(0, 0, "r0", time.Millisecond)},
		"no request ids, by trace":      {sampleReq: "", span: spanOf(0, 0, "", time.Millisecond)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c collector
				j := NewJoiner(JoinOptions{Wait: time.Second}, c.next)
				if tt.spanFirst {
					j.Span(tt.span)
					j.Sample(sampleOf(0, tt.sampleReq))
				} else {
					j.Sample(sampleOf(0, tt.sampleReq))
					if got := len(c.samples()); got != 0 {
						t.Fatalf("sample passed on before its span: %d", got)
					}
					j.Span(tt.span)
				}
				out := c.samples()
				if len(out) != 1 || out[0].Span == nil {
					t.Fatalf("passed on %d samples, first %+v; want 1 with its span", len(out), out)
				}
				if got, want := out[0].Span.Queue, time.Millisecond; got != want {
					t.Errorf("queue = %v, want %v", got, want)
				}
				j.Flush(context.Background())
				st := j.Stats()
				if st.Joined != 1 || st.ByRequestID != tt.byReq || st.NoSpan != 0 || st.Unjoined != 0 {
					t.Errorf("stats = %+v", st)
				}
			})
		})
	}
}

func TestJoinWaitExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		j := NewJoiner(JoinOptions{Wait: 10 * time.Second}, c.next)
		j.Sample(sampleOf(0, ""))
		time.Sleep(5 * time.Second)
		j.Sample(sampleOf(1, ""))
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()
		out := c.samples()
		if len(out) != 1 || out[0].TraceID != traceHex(0) || out[0].Span != nil {
			t.Fatalf("after 10 s: passed on %+v; want the first sample without a span", out)
		}
		j.Span(spanOf(1, 1, "", 0)) // the second one's span is still in time
		time.Sleep(20 * time.Second)
		j.Span(spanOf(0, 0, "", 0)) // too late: its sample left
		j.Flush(context.Background())
		st := j.Stats()
		if st.Joined != 1 || st.NoSpan != 1 || st.Unjoined != 1 || st.Held != 0 || st.Samples != 2 {
			t.Errorf("stats = %+v", st)
		}
	})
}

func TestFlushWaitsForHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		j := NewJoiner(JoinOptions{Wait: 3 * time.Second}, c.next)
		j.Sample(sampleOf(0, ""))
		j.Sample(sampleOf(1, ""))
		start := time.Now()
		go func() {
			time.Sleep(time.Second)
			j.Span(spanOf(0, 0, "", 0))
		}()
		j.Flush(context.Background())
		if got, want := time.Since(start), 3*time.Second; got != want {
			t.Errorf("Flush took %v, want %v (the second sample's Wait)", got, want)
		}
		if got := len(c.samples()); got != 2 {
			t.Errorf("passed on %d samples, want 2", got)
		}
		j.Sample(sampleOf(2, ""))
		j.Span(spanOf(3, 3, "", 0))
		st := j.Stats()
		if st.Joined != 1 || st.NoSpan != 1 || st.Late != 1 || st.Unjoined != 1 || len(c.samples()) != 2 {
			t.Errorf("stats = %+v, passed on %d", st, len(c.samples()))
		}
	})
}

func TestFlushContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c collector
		j := NewJoiner(JoinOptions{Wait: time.Hour}, c.next)
		j.Sample(sampleOf(0, ""))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		j.Flush(ctx)
		if got := time.Since(start); got != time.Second {
			t.Errorf("Flush took %v, want 1s", got)
		}
		if out := c.samples(); len(out) != 1 || out[0].Span != nil {
			t.Errorf("passed on %+v, want the sample without span", out)
		}
	})
}

func TestJoinEvictsOldestSpans(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{MaxPendingSpans: 3}, c.next)
	for i := range 5 {
		j.Span(spanOf(i, i, "", 0))
	}
	if st := j.Stats(); st.Evicted != 2 || st.Pending != 3 {
		t.Fatalf("stats = %+v; want 2 evicted, 3 pending", st)
	}
	j.Sample(sampleOf(0, "")) // evicted: held
	j.Sample(sampleOf(4, "")) // kept: joined at once
	out := c.samples()
	if len(out) != 1 || out[0].TraceID != traceHex(4) || out[0].Span == nil {
		t.Fatalf("passed on %+v; want sample 4 joined", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.Flush(ctx)
	st := j.Stats()
	if st.Joined != 1 || st.Evicted != 2 || st.Unjoined != 2 || st.NoSpan != 1 || st.Spans != 5 {
		t.Errorf("stats = %+v", st)
	}
}

func TestJoinDuplicates(t *testing.T) {
	tests := map[string]struct {
		first, second Span
		sampleFirst   bool
	}{
		"same span id after join":  {first: spanOf(0, 0, "", 1), second: spanOf(0, 0, "", 2), sampleFirst: true},
		"same trace after join":    {first: spanOf(0, 0, "", 1), second: spanOf(0, 7, "", 2), sampleFirst: true},
		"sent again while waiting": {first: spanOf(0, 0, "", 1), second: spanOf(0, 0, "", 2)},
		"same trace while waiting": {first: spanOf(0, 0, "", 1), second: spanOf(0, 7, "", 2)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var c collector
			j := NewJoiner(JoinOptions{Wait: time.Second}, c.next)
			if tt.sampleFirst {
				j.Sample(sampleOf(0, ""))
			}
			j.Span(tt.first)
			j.Span(tt.second)
			if !tt.sampleFirst {
				j.Sample(sampleOf(0, ""))
			}
			out := c.samples()
			if len(out) != 1 || out[0].Span == nil || out[0].Span.Queue != 1 {
				t.Fatalf("passed on %+v; want one sample with the first span", out)
			}
			if st := j.Stats(); st.Duplicates != 1 || st.Joined != 1 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestJoinUntracedAndSharedTrace(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{}, c.next)
	j.Sample(engine.Sample{Stage: "plain"})
	j.Sample(sampleOf(0, ""))
	j.Sample(sampleOf(0, "")) // a second request under the same trace id
	if out := c.samples(); len(out) != 2 || out[0].Stage != "plain" || out[1].Span != nil {
		t.Fatalf("passed on %+v", out)
	}
	j.Span(spanOf(0, 0, "", 0))
	st := j.Stats()
	if st.Untraced != 1 || st.NoSpan != 1 || st.Joined != 1 || st.Samples != 3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestJoinRemembersBoundedJoins(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{RememberJoins: 2}, c.next)
	join := func(i int) {
		j.Sample(sampleOf(i, ""))
		j.Span(spanOf(i, i, "", 0))
	}
	for i := range 5 {
		join(i)
	}
	// Two generations of two: joins 2 and 3 in the older, 4 in the newer.
	if got := len(j.joined) + len(j.joinedOld); got != 3 {
		t.Errorf("remembered %d joins, want 3", got)
	}
	j.Span(spanOf(2, 2, "", 0))
	j.Span(spanOf(4, 4, "", 0))
	if st := j.Stats(); st.Duplicates != 2 || st.Joined != 5 {
		t.Errorf("stats = %+v", st)
	}
	// Traces 0 and 1 are forgotten: a span of one waits for a sample.
	j.Span(spanOf(1, 1, "", 0))
	if st := j.Stats(); st.Duplicates != 2 || st.Pending != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// A second request under a trace already joined is held, and the trace's
// span again is still a duplicate; once the trace is forgotten, the
// held sample is on its own and a span of the trace joins it.
func TestJoinSampleOfAJoinedTrace(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{RememberJoins: 1, Wait: time.Hour}, c.next)
	j.Sample(sampleOf(0, ""))
	j.Span(spanOf(0, 0, "", 0))
	j.Sample(sampleOf(0, "")) // held: its trace's span was the first's
	j.Span(spanOf(0, 0, "", 0))
	if st := j.Stats(); st.Duplicates != 1 || st.Held != 1 || st.Joined != 1 {
		t.Fatalf("stats = %+v", st)
	}
	j.Sample(sampleOf(1, ""))
	j.Span(spanOf(1, 1, "", 0)) // trace 0 in the older generation now
	j.Span(spanOf(0, 0, "", 0))
	if st := j.Stats(); st.Duplicates != 2 || st.Held != 1 {
		t.Fatalf("stats = %+v", st)
	}
	j.Sample(sampleOf(2, ""))
	j.Span(spanOf(2, 2, "", 0)) // and forgotten
	j.Span(spanOf(0, 5, "", time.Millisecond))
	st := j.Stats()
	if st.Duplicates != 2 || st.Held != 0 || st.Joined != 4 {
		t.Errorf("stats = %+v", st)
	}
	out := c.samples()
	if last := out[len(out)-1]; last.TraceID != traceHex(0) || last.Span == nil || last.Span.Queue != time.Millisecond {
		t.Errorf("last passed on %+v", last)
	}
}

// Recycled entries start empty: a sample held after another was joined
// carries nothing of the first.
func TestJoinRecyclesEntries(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{Wait: time.Hour}, c.next)
	first := sampleOf(0, "r0")
	first.Tags = map[string]string{"k": "v"}
	j.Sample(first)
	j.Span(spanOf(0, 0, "r0", time.Millisecond))
	j.Span(spanOf(1, 1, "r1", 2*time.Millisecond))
	j.Sample(sampleOf(1, "r1"))
	if j.freeHeld.n != 1 || j.freePend.n != 1 {
		t.Fatalf("free lists %d and %d, want 1 and 1", j.freeHeld.n, j.freePend.n)
	}
	if h := j.freeHeld.front; h.s.Tags != nil || h.s.TraceID != "" || h.byReq || h.key != (TraceID{}) {
		t.Errorf("a recycled held entry keeps %+v", h)
	}
	j.Sample(sampleOf(2, ""))
	j.Span(spanOf(2, 2, "", 3*time.Millisecond))
	out := c.samples()
	if len(out) != 3 || out[2].Tags != nil || out[2].Span.Queue != 3*time.Millisecond || out[1].Span.Queue != 2*time.Millisecond {
		t.Errorf("passed on %+v", out)
	}
}

func TestJoinConcurrent(t *testing.T) {
	var c collector
	j := NewJoiner(JoinOptions{Wait: time.Minute}, c.next)
	const n = 2000
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				if i%2 == 0 {
					j.Span(spanOf(i, i, "", 0))
					j.Sample(sampleOf(i, ""))
				} else {
					j.Sample(sampleOf(i, ""))
					j.Span(spanOf(i, i, "", 0))
				}
			}
		})
	}
	wg.Wait()
	j.Flush(context.Background())
	st := j.Stats()
	if st.Joined != n || len(c.samples()) != n {
		t.Errorf("joined %d, passed on %d; want %d", st.Joined, len(c.samples()), n)
	}
}

// checkAccount holds a Joiner's account to its sums.
func checkAccount(t *testing.T, st JoinStats) {
	t.Helper()
	if st.Spans != st.Joined+st.Duplicates+st.Evicted+st.Unjoined+st.Pending {
		t.Errorf("spans %d != joined %d + duplicates %d + evicted %d + unjoined %d + pending %d",
			st.Spans, st.Joined, st.Duplicates, st.Evicted, st.Unjoined, st.Pending)
	}
	if st.Samples != st.Joined+st.NoSpan+st.Untraced+st.Held {
		t.Errorf("samples %d != joined %d + no span %d + untraced %d + held %d",
			st.Samples, st.Joined, st.NoSpan, st.Untraced, st.Held)
	}
	if st.ByRequestID > st.Joined {
		t.Errorf("by request id %d > joined %d", st.ByRequestID, st.Joined)
	}
}

// TestJoinAccountAddsUp drives a Joiner with a seeded mix of everything
// that can happen to a span or a sample and checks the account at every
// step and that every sample came out once.
func TestJoinAccountAddsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		var c collector
		j := NewJoiner(JoinOptions{Wait: 2 * time.Second, MaxPendingSpans: 50, RememberJoins: 30}, c.next)
		var given int64
		for i := range 3000 {
			switch rng.IntN(6) {
			case 0:
				j.Sample(engine.Sample{})
				given++
			case 1, 2:
				j.Sample(sampleOf(rng.IntN(400), fmt.Sprintf("r%d", rng.IntN(400))))
				given++
			case 3, 4:
				j.Span(spanOf(rng.IntN(400), rng.IntN(400), fmt.Sprintf("r%d", rng.IntN(400)), 0))
			case 5:
				time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
			}
			if i%100 == 0 {
				checkAccount(t, j.Stats())
			}
		}
		j.Flush(context.Background())
		st := j.Stats()
		checkAccount(t, st)
		if st.Joined == 0 || st.ByRequestID == 0 || st.Duplicates == 0 || st.Evicted == 0 || st.NoSpan == 0 {
			t.Errorf("the mix missed a case: %+v", st)
		}
		if st.Held != 0 || st.Pending != 0 || int64(len(c.samples())) != given || st.Samples != given {
			t.Errorf("after Flush: %+v; passed on %d of %d", st, len(c.samples()), given)
		}
	})
}

func TestParseTraceID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"4bf92f3577b34da6a3ce929d0e0e4736", true},
		{"4BF92F3577B34DA6A3CE929D0E0E4736", true},
		{"4bf92f3577b34da6a3ce929d0e0e473", false},
		{"4bf92f3577b34da6a3ce929d0e0e47361", false},
		{"4bf92f3577b34da6a3ce929d0e0e473g", false},
		{"", false},
	} {
		k, ok := ParseTraceID(tc.id)
		if ok != tc.ok {
			t.Errorf("ParseTraceID(%q) ok = %v, want %v", tc.id, ok, tc.ok)
		}
		if ok && k.String() != strings.ToLower(tc.id) {
			t.Errorf("ParseTraceID(%q) = %s", tc.id, k)
		}
	}
}
