// Package memlimit bounds the memory of the whole process: a Watcher reads
// the Go runtime's own accounting every few tens of milliseconds and, when
// the bound is crossed, cancels a context, so the run stops like an
// interrupt (and the Lua state that was allocating names its line) instead
// of the runtime dying with "out of memory" and a Go stack trace. Guard
// gives a Lua state a context that also reads memory itself, after an
// instruction long enough to have crossed the bound.
package memlimit

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often a Watcher reads the process's memory: short
// enough that a script doubling a string is caught within a few doublings,
// cheap enough (runtime/metrics reads no heap) to be invisible in timings.
// While the process is more than FarBelow under its bound it reads ten
// times less often: to cross the bound unseen, a process would have to
// fill 2 GiB of fresh memory in 250 ms, 8 GiB a second (this project's
// machine touched 1 GiB in 2.8 s); and each read wakes an otherwise idle
// process, about 5 ms of CPU a second at 25 ms (measured).
const DefaultInterval = 25 * time.Millisecond

// FarBelow is the room under the bound from which a Watcher reads ten
// times less often than its interval.
const FarBelow = 2 << 30

// GCShare is the share of the bound given to debug.SetMemoryLimit, so the
// garbage collector works harder before the bound is reached and only
// live data, not garbage, can cross it.
const GCShare = 0.9

// MB is a megabyte as the messages count it (2^20 bytes).
const MB = 1 << 20

// ExceededError is the cause of a context canceled by a Watcher.
type ExceededError struct {
	Limit uint64 // the bound, in bytes
	Used  uint64 // what was measured when it was crossed, in bytes
}

// Error says which bound was crossed: "memory limit 256 MB exceeded".
func (e *ExceededError) Error() string {
	return fmt.Sprintf("memory limit %s exceeded", FormatSize(e.Limit))
}

// Reader returns the bytes the process holds now.
type Reader func() uint64

// Watcher cancels its context when the process's memory crosses its limit.
// Its methods are safe for concurrent use.
type Watcher struct {
	limit  uint64
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	read   Reader

	over    atomic.Bool // exceeded, read without mu
	stopped atomic.Bool // Stop was called

	mu       sync.Mutex
	exceeded *ExceededError
	peak     uint64
}

// Options tune a Watcher; the zero value reads the Go runtime every
// DefaultInterval and sets the GC's soft limit.
type Options struct {
	Interval time.Duration // 0: DefaultInterval
	Read     Reader        // nil: Used, from runtime/metrics
	// NoGCLimit leaves debug.SetMemoryLimit alone (tests, and callers that
	// manage it themselves).
	NoGCLimit bool
}

// Start watches the process's memory until Stop, with limit in bytes; a
// limit of 0 watches nothing and never cancels. The Watcher is the one
// Guard checks against until Stop.
func Start(limit uint64, opts Options) *Watcher {
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &Watcher{limit: limit, ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	if limit == 0 {
		close(w.done)
		return w
	}
	if !opts.NoGCLimit {
		prev := debug.SetMemoryLimit(int64(float64(limit) * GCShare))
		go func() { <-w.done; debug.SetMemoryLimit(prev) }()
	}
	w.read = opts.Read
	if w.read == nil {
		w.read = Used
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	active.Store(w)
	go w.watch(interval)
	return w
}

// watch reads memory every interval (ten times that while more than
// FarBelow under the bound) until Stop or the first crossing.
func (w *Watcher) watch(interval time.Duration) {
	defer close(w.done)
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		used := w.read()
		if w.check(used) {
			return
		}
		next := interval
		if used < w.limit && w.limit-used > FarBelow {
			next *= 10
		}
		t.Reset(next)
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// check records used and cancels the context the first time it is above
// the limit; it reports whether the limit has been crossed.
func (w *Watcher) check(used uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peak = max(w.peak, used)
	if w.exceeded != nil {
		return true
	}
	if used <= w.limit {
		return false
	}
	w.exceeded = &ExceededError{Limit: w.limit, Used: used}
	w.over.Store(true)
	w.cancel(w.exceeded)
	return true
}

// Context ends, with an *ExceededError cause, when the limit is crossed.
func (w *Watcher) Context() context.Context { return w.ctx }

// Limit is the bound in bytes; 0 when nothing is watched.
func (w *Watcher) Limit() uint64 { return w.limit }

// Exceeded returns the crossing, or nil while the process is within bounds.
func (w *Watcher) Exceeded() *ExceededError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.exceeded
}

// Peak is the highest reading so far, in bytes.
func (w *Watcher) Peak() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak
}

// Stop ends the watching and waits for it; the context stays as it is. Later
// calls do nothing.
func (w *Watcher) Stop() {
	w.once.Do(func() {
		active.CompareAndSwap(w, nil)
		w.stopped.Store(true)
		close(w.stop)
	})
	<-w.done
}

// usedSamples are the runtime/metrics Used reads: all memory the runtime
// mapped, less what it gave back to the OS — close to the Go part of the
// RSS, and unlike the heap alone it counts goroutine stacks and the GC's
// own data.
var usedSamples = []string{"/memory/classes/total:bytes", "/memory/classes/heap/released:bytes"}

// Used returns the bytes the Go runtime holds from the OS now.
func Used() uint64 {
	s := []metrics.Sample{{Name: usedSamples[0]}, {Name: usedSamples[1]}}
	metrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

// ParseSize reads a size such as "2GB", "512MB", "1.5G", "300MiB" or a
// number of bytes; units are powers of 1024, as the messages count them.
func ParseSize(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	num := strings.TrimRight(t, "KMGTIB")
	unit := strings.TrimSuffix(strings.TrimSuffix(t[len(num):], "B"), "I")
	shift, ok := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a size (use e.g. 512MB or 2GB)", s)
	}
	b := v * float64(uint64(1)<<shift)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(b), nil
}

// FormatSize renders n bytes as whole megabytes: "256 MB".
func FormatSize(n uint64) string {
	return strconv.FormatUint((n+MB/2)/MB, 10) + " MB"
}
