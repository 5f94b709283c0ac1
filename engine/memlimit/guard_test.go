package memlimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// doneN calls g.Done n times, as a Lua state does before n instructions,
// and reports whether the last one was closed.
func doneN(g context.Context, n int) bool {
	var c <-chan struct{}
	for range n {
		c = g.Done()
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestGuardReadsAfterALongStep: with the Watcher's own goroutine asleep
// (an hour's interval), a guarded context reads memory only after a step
// of more than LongStep between two looks, and a crossing it finds ends
// it, and the Watcher's context, before Done returns.
func TestGuardReadsAfterALongStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var used, reads atomic.Uint64
		used.Store(10 * MB)
		w := Start(256*MB, Options{Interval: time.Hour, NoGCLimit: true, Read: func() uint64 {
			reads.Add(1)
			return used.Load()
		}})
		defer w.Stop()
		synctest.Wait() // the Watcher's first read
		g := Guard(context.Background())
		if doneN(g, 1000) || reads.Load() != 1 {
			t.Fatalf("1,000 quick steps: closed or read (%d reads, want the Watcher's 1)", reads.Load())
		}
		time.Sleep(2 * LongStep)
		if doneN(g, lookEvery) || reads.Load() != 2 {
			t.Fatalf("a long step at 10 MB of 256 MB: closed, or no read (%d reads, want 2)", reads.Load())
		}
		used.Store(300 * MB)
		if doneN(g, 1000) {
			t.Fatal("quick steps read memory")
		}
		time.Sleep(LongStep / 2)
		if doneN(g, lookEvery) {
			t.Fatalf("a step of %v read memory", LongStep/2)
		}
		time.Sleep(2 * LongStep)
		if !doneN(g, lookEvery) {
			t.Fatalf("a long step at 300 MB of 256 MB: Done open (%d reads)", reads.Load())
		}
		var ex *ExceededError
		if !errors.As(context.Cause(w.Context()), &ex) || ex.Used != 300*MB {
			t.Fatalf("Watcher's cause right after Done = %v, want the crossing at 300 MB", context.Cause(w.Context()))
		}
		if !errors.Is(g.Err(), context.Canceled) {
			t.Errorf("guarded Err = %v, want context.Canceled", g.Err())
		}
		// Crossed, it stays closed and reads no more.
		n := reads.Load()
		time.Sleep(2 * LongStep)
		if !doneN(g, 1) || !doneN(Guard(context.Background()), 1) || reads.Load() != n {
			t.Errorf("after the crossing: a Done open, or read again (%d reads, had %d)", reads.Load(), n)
		}
	})
}

// TestGuardAfterStop: a stopped Watcher cancels nothing more, and a
// context guarded before Stop reads no more memory.
func TestGuardAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads atomic.Uint64
		w := Start(256*MB, Options{Interval: time.Hour, NoGCLimit: true, Read: func() uint64 {
			reads.Add(1)
			return 300 * MB * min(reads.Load()-1, 1) // over from the second read
		}})
		synctest.Wait()
		g := Guard(context.Background())
		w.Stop()
		doneN(g, lookEvery)
		time.Sleep(2 * LongStep)
		if doneN(g, lookEvery) || reads.Load() != 1 || w.Context().Err() != nil {
			t.Errorf("after Stop: Done closed %v, %d reads, Watcher's context %v", doneN(g, 0), reads.Load(), w.Context().Err())
		}
	})
}

func TestGuardWithoutAWatcher(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if got := Guard(ctx); got != ctx {
		t.Errorf("Guard with no Watcher = %v, want ctx itself", got)
	}
	w := Start(0, Options{})
	if got := Guard(ctx); got != ctx {
		t.Errorf("Guard with a Watcher of no bound = %v, want ctx itself", got)
	}
	w.Stop()
	w = Start(256*MB, Options{Interval: time.Hour, NoGCLimit: true, Read: func() uint64 { return MB }})
	if got := Guard(ctx); got == ctx {
		t.Error("Guard with a running Watcher is ctx itself")
	}
	w.Stop()
	if got := Guard(ctx); got != ctx {
		t.Errorf("Guard after Stop = %v, want ctx itself", got)
	}
}

// TestGuardKeepsTheContextsOwnEnd: a guarded context under its bound ends
// with ctx, with ctx's error and values.
func TestGuardKeepsTheContextsOwnEnd(t *testing.T) {
	w := Start(256*MB, Options{Interval: time.Hour, NoGCLimit: true, Read: func() uint64 { return MB }})
	defer w.Stop()
	type key struct{}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "v"), time.Hour)
	g := Guard(ctx)
	if g.Done() == nil || g.Value(key{}) != "v" {
		t.Fatalf("guarded Done = %v, Value = %v; want ctx's", g.Done(), g.Value(key{}))
	}
	cancel()
	<-g.Done()
	if !errors.Is(g.Err(), context.Canceled) || w.Exceeded() != nil {
		t.Errorf("Err = %v, exceeded = %v; want ctx's own cancel and no crossing", g.Err(), w.Exceeded())
	}
}

// BenchmarkGuardDone is what a Lua state pays before every instruction
// under a bound, the look at the clock every lookEvery calls included.
func BenchmarkGuardDone(b *testing.B) {
	w := Start(1<<40, Options{Interval: time.Hour, NoGCLimit: true})
	defer w.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := Guard(ctx)
	for b.Loop() {
		g.Done()
	}
}
