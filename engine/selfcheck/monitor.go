// Package selfcheck watches llmload's own process while it generates load
// — CPU, goroutine scheduling latency and GC pauses — so a stage whose
// timings the client itself may have distorted is marked client-bound
// instead of being reported as the server's latency.
package selfcheck

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
)

// Limits beyond which a stage is client-bound.
const (
	// MaxCPUShare of all cores: past it, goroutines queue for a CPU.
	MaxCPUShare = 0.90
	// MaxSchedLatency is the p99 wait of a runnable goroutine: a chunk
	// read by such a goroutine is timestamped that much late. 2 ms is a
	// fraction of any real token gap; a 2-core box running the built-in
	// simulator in-process sees ~1 ms from the simulator's own work.
	MaxSchedLatency = 2 * time.Millisecond
	// MaxGCPause is the p99 stop-the-world pause.
	MaxGCPause = time.Millisecond
	// MaxGCShare is the share of the window spent in GC pauses.
	MaxGCShare = 0.01
)

// DefaultInterval is how often the process is sampled.
const DefaultInterval = time.Second

const (
	schedMetric = "/sched/latencies:seconds"
	gcMetric    = "/sched/pauses/total/gc:seconds"
)

// sample is one interval's worth of observations.
type sample struct {
	at    time.Time
	cpu   float64  // CPU seconds used in the interval / interval seconds (1.0 = one core)
	sched []uint64 // histogram count deltas
	gc    []uint64 // histogram count deltas
}

// Monitor samples the process in the background from Start until Stop.
// Window is safe for concurrent use.
type Monitor struct {
	interval time.Duration
	cores    int
	read     []metrics.Sample
	schedB   []float64
	gcB      []float64

	mu      sync.Mutex
	samples []sample

	lastCPU   time.Duration
	lastAt    time.Time
	lastSched []uint64
	lastGC    []uint64
	cpuOK     bool

	stop chan struct{}
	done chan struct{}
}

// Start begins sampling every interval (DefaultInterval when ≤ 0).
func Start(interval time.Duration) *Monitor {
	if interval <= 0 {
		interval = DefaultInterval
	}
	m := &Monitor{
		interval: interval, cores: runtime.GOMAXPROCS(0),
		read: []metrics.Sample{{Name: schedMetric}, {Name: gcMetric}},
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	m.baseline()
	go m.loop()
	return m
}

// Stop takes a last sample and ends sampling; idempotent.
func (m *Monitor) Stop() {
	select {
	case <-m.stop:
		<-m.done
		return
	default:
	}
	close(m.stop)
	<-m.done
}

func (m *Monitor) loop() {
	defer close(m.done)
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			m.take()
			return
		case <-t.C:
			m.take()
		}
	}
}

// baseline reads the starting values the first interval is measured from.
func (m *Monitor) baseline() {
	metrics.Read(m.read)
	m.lastSched, m.schedB = histCounts(m.read[0]), histBuckets(m.read[0])
	m.lastGC, m.gcB = histCounts(m.read[1]), histBuckets(m.read[1])
	m.lastCPU, m.cpuOK = processCPU()
	m.lastAt = time.Now()
}

// take records one interval.
func (m *Monitor) take() {
	now := time.Now()
	metrics.Read(m.read)
	sched, gc := histCounts(m.read[0]), histCounts(m.read[1])
	cpu, ok := processCPU()
	s := sample{at: now, sched: delta(sched, m.lastSched), gc: delta(gc, m.lastGC), cpu: -1}
	// CPU time is accounted in ticks, so a short interval (the last one, at
	// Stop) would turn one tick into an absurd share: judge CPU only over
	// intervals of at least half the sampling period, and never above what
	// the cores can give.
	if secs := now.Sub(m.lastAt).Seconds(); ok && m.cpuOK && secs >= m.interval.Seconds()/2 {
		s.cpu = min((cpu-m.lastCPU).Seconds()/secs, float64(runtime.NumCPU()))
	}
	m.lastSched, m.lastGC, m.lastCPU, m.cpuOK, m.lastAt = sched, gc, cpu, ok, now
	m.mu.Lock()
	m.samples = append(m.samples, s)
	m.mu.Unlock()
}

// Window judges the samples taken within [start, end] (an interval that
// ended inside the window counts). No sample in the window: an empty,
// not-bound check.
func (m *Monitor) Window(start, end time.Time) engine.ClientCheck {
	c := engine.ClientCheck{Cores: m.cores}
	m.mu.Lock()
	in := make([]sample, 0, len(m.samples))
	for _, s := range m.samples {
		if !s.at.Before(start) && !s.at.After(end.Add(m.interval)) {
			in = append(in, s)
		}
	}
	m.mu.Unlock()
	sched, gc := make([]uint64, len(m.lastSched)), make([]uint64, len(m.lastGC))
	for _, s := range in {
		c.CPUPercent = max(c.CPUPercent, 100*s.cpu)
		add(sched, s.sched)
		add(gc, s.gc)
	}
	c.SchedLatencyP99MS = 1000 * quantile(sched, m.schedB, 0.99)
	c.GCPauseP99MS = 1000 * quantile(gc, m.gcB, 0.99)
	c.GCPauseTotalMS = 1000 * total(gc, m.gcB)
	judge(&c, end.Sub(start))
	return c
}

// judge sets Bound and Reasons from the limits.
func judge(c *engine.ClientCheck, window time.Duration) {
	if c.CPUPercent >= 100*MaxCPUShare*float64(c.Cores) {
		c.Reasons = append(c.Reasons, fmt.Sprintf("CPU at %.0f%% of the %d%% that %d cores give", c.CPUPercent, 100*c.Cores, c.Cores))
	}
	if ms := float64(MaxSchedLatency) / 1e6; c.SchedLatencyP99MS > ms {
		c.Reasons = append(c.Reasons, fmt.Sprintf("runnable goroutines waited %.2f ms (p99) to run, so chunk timestamps may be that late", c.SchedLatencyP99MS))
	}
	if ms := float64(MaxGCPause) / 1e6; c.GCPauseP99MS > ms {
		c.Reasons = append(c.Reasons, fmt.Sprintf("GC pauses p99 %.2f ms", c.GCPauseP99MS))
	}
	if w := window.Seconds() * 1000; w > 0 && c.GCPauseTotalMS > MaxGCShare*w {
		c.Reasons = append(c.Reasons, fmt.Sprintf("GC paused the process %.1f%% of the time", 100*c.GCPauseTotalMS/w))
	}
	c.Bound = len(c.Reasons) > 0
}
