package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// GC tuning during a run: a high GC target while the heap is small, so
// that collections, whose work takes the CPU from the goroutine about to
// start an open-model arrival, come rarely (measured: schedule-lag p99 at
// 2,000 req/s 0.7–1.4 ms at GOGC 400 against 3.4–6 ms at 100); and a soft
// memory limit that follows the live heap, so a large heap (10,000 VUs are
// 580 MB live) is kept near LiveFactor times its live set, as Go's default
// target would, instead of the 5× the high target alone allows.
const (
	GCPercent  = 400
	LiveFactor = 2
	FloorBytes = 256 << 20 // the limit never goes below this
)

// gcLimit is the soft memory limit for a live heap of live bytes, at most
// ceiling (0: none), so that the collector works harder before a hard
// bound stops the run.
func gcLimit(live, ceiling uint64) int64 {
	l := max(FloorBytes, uint64(float64(live)*LiveFactor))
	if ceiling > 0 {
		l = min(l, ceiling)
	}
	return int64(min(l, math.MaxInt64))
}

// TuneGC applies the tuning, the limit kept at most ceiling (0: none),
// until stop is called, which restores the previous settings. The limit is
// moved after every collection, when the live heap is known: a heap that
// grows fast (thousands of VUs starting) would otherwise meet a stale,
// too low limit and be collected again and again. GOGC or GOMEMLIMIT set
// in the environment win: the matching setting is left alone.
func TuneGC(ceiling uint64) (stop func()) {
	_, gogc := os.LookupEnv("GOGC")
	_, gomem := os.LookupEnv("GOMEMLIMIT")
	if gogc {
		return func() {}
	}
	oldPercent := debug.SetGCPercent(GCPercent)
	if gomem {
		return func() { debug.SetGCPercent(oldPercent) }
	}
	oldLimit := debug.SetMemoryLimit(-1)
	var stopped atomic.Bool
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	follow := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(gcLimit(sample[0].Value.Uint64(), ceiling))
		}
	}
	follow()
	afterEachGC(func() bool {
		if stopped.Load() {
			return false
		}
		follow()
		return true
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			stopped.Store(true)
			debug.SetMemoryLimit(oldLimit)
			debug.SetGCPercent(oldPercent)
		})
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
