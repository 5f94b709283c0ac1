package memlimit

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// GC tuning during a run: a high GC target while the heap is small, so
// that collections, whose work takes the CPU from the goroutine about to
// start an open-model arrival, come rarely (measured: schedule-lag p99 at
// 2,000 req/s 0.7–1.4 ms at GOGC 400 against 3.4–6 ms at 100); and a soft
// memory limit that follows the live heap, so a large heap (10,000 VUs are
// 800 MB live) is kept near LiveFactor times its live set instead of the
// 5× the target alone allows.
const (
	GCPercent  = 400
	LiveFactor = 2.5
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

// TuneGC applies the tuning, the limit checked every interval and kept at
// most ceiling (0: none), until stop is called, which restores the previous
// settings. GOGC or GOMEMLIMIT set in the environment win: the matching
// setting is left alone.
func TuneGC(every time.Duration, ceiling uint64) (stop func()) {
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
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	follow := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(gcLimit(sample[0].Value.Uint64(), ceiling))
		}
	}
	follow()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				follow()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			debug.SetMemoryLimit(oldLimit)
			debug.SetGCPercent(oldPercent)
		})
	}
}
