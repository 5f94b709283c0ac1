package sim

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestStepGrowsWithTheBatch(t *testing.T) {
	cfg := Config{MaxBatch: 8, DecodeBase: 10 * time.Millisecond, DecodePerSeq: time.Millisecond}
	s := newScheduler(&cfg)
	tests := []struct {
		running int
		want    time.Duration
	}{
		{0, 10 * time.Millisecond},
		{1, 10 * time.Millisecond},
		{4, 13 * time.Millisecond},
		{8, 17 * time.Millisecond},
	}
	for _, tt := range tests {
		s.running = tt.running
		if got, want := s.step(), tt.want; got != want {
			t.Errorf("step with %d running = %v, want %v", tt.running, got, want)
		}
	}
}

func TestClockAddsStepsAndStalls(t *testing.T) {
	cfg := Config{MaxBatch: 8, DecodeBase: 10 * time.Millisecond, DecodePerSeq: time.Millisecond,
		PrefillBase: 20 * time.Millisecond, PrefillInterference: 0.5}
	s := newScheduler(&cfg)
	s.running = 3
	t0 := time.Unix(1000, 0)
	c := s.newClock(t0)
	if got, want := c.tick(), t0.Add(12*time.Millisecond); !got.Equal(want) {
		t.Errorf("first tick = %v, want %v", got, want)
	}
	s.prefill(0) // a 20 ms prefill stalls the batch by 10 ms
	if got, want := c.tick(), t0.Add(34*time.Millisecond); !got.Equal(want) {
		t.Errorf("tick after a prefill = %v, want %v", got, want)
	}
	if got, want := c.tick(), t0.Add(46*time.Millisecond); !got.Equal(want) {
		t.Errorf("next tick = %v, want %v", got, want)
	}
}

func TestPrefillsQueueOnOneLane(t *testing.T) {
	cfg := Config{PrefillBase: time.Hour, PrefillPerToken: time.Minute}
	s := newScheduler(&cfg)
	first := s.prefill(0)
	second := s.prefill(30)
	if got, want := second.end.Sub(first.end), 90*time.Minute; got != want {
		t.Errorf("second prefill ends %v after the first, want %v", got, want)
	}
}

func TestSlotsAreFirstComeFirstServed(t *testing.T) {
	cfg := Config{MaxBatch: 1}
	s := newScheduler(&cfg)
	ctx := context.Background()
	if err := s.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 3 {
		waitFor(t, func() bool { _, w := s.counts(); return w == i })
		wg.Go(func() {
			if err := s.acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			s.release()
		})
	}
	waitFor(t, func() bool { _, w := s.counts(); return w == 3 })
	s.release()
	wg.Wait()
	if got, want := order, []int{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("admission order = %v, want %v", got, want)
	}
	if r, w := s.counts(); r != 0 || w != 0 {
		t.Errorf("after all released: running %d, waiting %d, want 0, 0", r, w)
	}
}

// slotWithWaiter is a one-slot scheduler whose slot is held, with one
// waiter queued: cancel ends the waiter's request, errc has its acquire's
// outcome.
func slotWithWaiter(t *testing.T) (s *scheduler, cancel context.CancelFunc, errc chan error) {
	t.Helper()
	s = newScheduler(&Config{MaxBatch: 1})
	if err := s.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	errc = make(chan error, 1)
	go func() { errc <- s.acquire(ctx) }()
	waitFor(t, func() bool { _, w := s.counts(); return w == 1 })
	return s, cancel, errc
}

func TestCanceledWaiterLeavesTheQueue(t *testing.T) {
	s, cancel, errc := slotWithWaiter(t)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a canceled acquire succeeded")
	}
	if r, w := s.counts(); r != 1 || w != 0 {
		t.Errorf("running %d, waiting %d, want 1, 0", r, w)
	}
	s.release()
	if r, _ := s.counts(); r != 0 {
		t.Errorf("running %d after release, want 0", r)
	}
}

// A prefill the client gave up on gives the lane back what it had not
// run: the next booking starts as if the canceled ones had never been
// made, not behind them.
func TestCanceledPrefillsFreeTheLane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{PrefillBase: 40 * time.Millisecond}
		s := newScheduler(&cfg)
		running := s.prefill(0) // runs now, ends at +40 ms
		var dropped []booking
		for range 24 { // a warmup's queue, granted as it was canceled
			dropped = append(dropped, s.prefill(0))
		}
		time.Sleep(10 * time.Millisecond)
		for _, b := range slices.Backward(dropped) {
			s.cancel(b)
		}
		s.cancel(running) // 30 ms of it left, given back too
		next := s.prefill(0)
		if got, want := next.end.Sub(next.start), 40*time.Millisecond; got != want {
			t.Errorf("a prefill takes %v, want %v", got, want)
		}
		if !next.start.Equal(time.Now()) {
			t.Errorf("after every booking was canceled the next prefill starts %v from now, want at once", next.start.Sub(time.Now()))
		}
		// A booking that already ran gives nothing back.
		time.Sleep(time.Second)
		later := s.prefill(0)
		s.cancel(next)
		if after := s.prefill(0); !after.start.Equal(later.end) {
			t.Errorf("canceling a finished prefill moved the lane: next starts %v after the one before ends", after.start.Sub(later.end))
		}
	})
}

// A slot granted to a waiter whose request has just ended is passed on,
// not kept by a request nobody waits for.
func TestGrantedAfterCancelPassesOn(t *testing.T) {
	s, cancel, errc := slotWithWaiter(t)
	s.mu.Lock() // the grant and the cancel land together
	cancel()
	s.releaseLocked()
	s.mu.Unlock()
	if err := <-errc; err == nil {
		t.Fatal("a canceled waiter kept the slot")
	}
	if r, w := s.counts(); r != 0 || w != 0 {
		t.Errorf("running %d, waiting %d, want 0, 0", r, w)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
	}
}

// concurrentStreams runs n streaming requests at once against url.
func concurrentStreams(t *testing.T, url, body string, n int) []streamResult {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	res := make([]streamResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if res[i], err = streamChat(context.Background(), client, url, body); err != nil {
				t.Error(err)
			}
			if !res[i].done {
				t.Errorf("stream %d did not end with [DONE]", i)
			}
		})
	}
	wg.Wait()
	return res
}

// The batch queue on a fake clock: the first two requests start at once,
// the last two wait for a slot.
func TestRequestsBeyondTheBatchQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MaxBatch: 2, PrefillBase: time.Millisecond, PrefillPerToken: -1,
			DecodeBase: 5 * time.Millisecond, DecodePerSeq: -1, PrefillInterference: -1, StopFraction: -1})
		defer s.Close()
		body := chatBody(t, "queue me", map[string]any{"stream": true, "max_tokens": 60}) // ≈ 300 ms each
		done := make(chan []streamResult)
		go func() { done <- streamsInProcess(s, body, 4) }()
		synctest.Wait()
		if st := s.Stats(); st.Running != 2 || st.Waiting != 2 {
			t.Errorf("running %d, waiting %d; want 2, 2", st.Running, st.Waiting)
		}
		res := <-done
		ttft := make([]time.Duration, len(res))
		for i, r := range res {
			ttft[i] = r.ttft
			if !r.done {
				t.Errorf("stream %d did not end with [DONE]", i)
			}
		}
		slices.Sort(ttft)
		// The first two start at once; the last two wait a whole request.
		if ttft[2] < 2*ttft[1] || ttft[2] < 100*time.Millisecond {
			t.Errorf("TTFTs %v: want the last two well above the first two", ttft)
		}
		if st := s.Stats(); st.Completed != 4 || st.Running != 0 || st.Waiting != 0 {
			t.Errorf("stats after the run = %+v", st)
		}
	})
}

func TestDecodeSlowsWithTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{MaxBatch: 8, PrefillBase: -1, PrefillPerToken: -1,
			DecodeBase: 3 * time.Millisecond, DecodePerSeq: 3 * time.Millisecond, PrefillInterference: -1, StopFraction: -1})
		defer s.Close()
		body := chatBody(t, "decode me", map[string]any{"stream": true, "max_tokens": 60})
		alone := streamInProcess(s, body).tpot()
		batched := streamsInProcess(s, body, 4)
		var sum time.Duration
		for _, r := range batched {
			sum += r.tpot()
		}
		mean := sum / time.Duration(len(batched))
		t.Logf("TPOT alone %v, in a batch of 4 %v", alone, mean)
		// A step is 3 ms alone and 12 ms with 4 running: on a fake clock
		// about 4× exactly (the batch fills over the first steps).
		if mean < 2*alone {
			t.Errorf("TPOT alone %v, in a batch of 4 %v: want at least 2× slower", alone, mean)
		}
	})
}

func TestClientDisconnectFreesTheSlot(t *testing.T) {
	s := New(Config{MaxBatch: 1, PrefillBase: -1, DecodeBase: 5 * time.Millisecond})
	url := startServer(t, s)
	body := chatBody(t, "long", map[string]any{"stream": true, "max_tokens": 5000})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = streamChat(ctxA, client, url, body) })
	waitFor(t, func() bool { return s.Stats().Running == 1 })
	wg.Go(func() { _, _ = streamChat(ctxB, client, url, body) })
	waitFor(t, func() bool { return s.Stats().Waiting == 1 })
	cancelA() // the running request goes away: the queued one takes its slot
	waitFor(t, func() bool { st := s.Stats(); return st.Running == 1 && st.Waiting == 0 && st.Canceled == 1 })
	cancelB()
	waitFor(t, func() bool { st := s.Stats(); return st.Running == 0 && st.Canceled == 2 })
	wg.Wait()
}
