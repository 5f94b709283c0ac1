package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// GC tuning during a run: a GC target that gives each collection cycle
// room for about HeadroomBytes of new garbage — GCPercent (400) while the
// heap is small, so that collections, whose work takes the CPU from the
// goroutine about to start an open-model arrival, come rarely (measured:
// schedule-lag p99 at 2,000 req/s 0.7–1.4 ms at GOGC 400 against 3.4–6 ms
// at 100), and down to MinGCPercent for a large heap, where 5× the live
// set would be gigabytes (10,000 VUs are 340 MB live). The target is set
// after every collection from the live heap it found; unlike a memory
// limit that follows the live heap, it cannot fall behind a heap that
// grows fast (thousands of VUs starting): such a limit, stale by one
// cycle, had the collector take 40% of the CPU while 10,000 VUs ramped.
const (
	GCPercent     = 400
	MinGCPercent  = 25
	HeadroomBytes = 96 << 20
)

// gcPercent is the GC target for a live heap of live bytes.
func gcPercent(live uint64) int {
	if live == 0 {
		return GCPercent
	}
	return int(min(max(100*HeadroomBytes/live, MinGCPercent), GCPercent))
}

// TuneGC applies the tuning until stop is called, which restores the
// previous settings; with a ceiling (0: none) it is also the soft memory
// limit, so that the collector works harder before a hard bound stops the
// run. GOGC or GOMEMLIMIT set in the environment win: the matching setting
// is left alone.
func TuneGC(ceiling uint64) (stop func()) {
	_, gogc := os.LookupEnv("GOGC")
	_, gomem := os.LookupEnv("GOMEMLIMIT")
	oldLimit := debug.SetMemoryLimit(-1)
	if !gomem && ceiling > 0 {
		debug.SetMemoryLimit(int64(min(ceiling, math.MaxInt64)))
	}
	if gogc {
		return func() {
			if !gomem {
				debug.SetMemoryLimit(oldLimit)
			}
		}
	}
	live := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[0].Value.Uint64()
	}
	percent := gcPercent(live())
	oldPercent := debug.SetGCPercent(percent)
	var (
		mu      sync.Mutex // the finalizer goroutine against stop
		stopped bool
	)
	afterEachGC(func() bool {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return false
		}
		if p := gcPercent(live()); p != percent {
			percent = p
			debug.SetGCPercent(p)
		}
		return true
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		stopped = true
		debug.SetGCPercent(oldPercent)
		if !gomem {
			debug.SetMemoryLimit(oldLimit)
		}
	}
}

// afterEachGC calls f after every garbage collection, on the runtime's
// finalizer goroutine, until f returns false: a sentinel object's
// finalizer runs once the collection that found it unreachable is done,
// and re-arms itself on a new sentinel.
func afterEachGC(f func() bool) {
	type sentinel struct{ _ [16]byte } // not tiny-allocated, so it is freed alone
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if f() {
				arm()
			}
		})
	}
	arm()
}
