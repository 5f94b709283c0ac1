// Package selfcheck watches llmload's own process while it generates load
// — CPU, goroutine scheduling latency and GC pauses — and, on Linux, the
// whole machine (busy and steal time, runnable threads from /proc/stat),
// so a stage whose timings the client side may have distorted is marked
// client-bound (llmload's own load) or machine-busy (other processes held
// the CPU) instead of being reported as the server's latency. A target
// served on this machine (engine/localserver) has its processes' CPU
// sampled on the same ticks and counted apart: its work is what the run
// measures, never "other processes".
package selfcheck

import (
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
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
	cpu   float64 // CPU seconds used in the interval / interval seconds (1.0 = one core); -1 not judged
	srv   float64 // the local server's, likewise; -1 not measured
	sched counts  // histogram count deltas
	gc    counts
	mach  machineDelta
}

// readers are where a Monitor's figures come from, replaced in tests.
type readers struct {
	process func() (time.Duration, bool) // this process's CPU time
	machine machineReader
	server  func() (time.Duration, bool) // the local server's CPU time; nil: none
	// resources reads what the process holds; nil: not watched.
	resources func() Resources
}

var defaultReaders = readers{process: processCPU, machine: procStat}

// Monitor samples the process in the background from Start until Stop.
// Window is safe for concurrent use.
type Monitor struct {
	interval time.Duration
	cores    int
	src      readers
	read     []metrics.Sample
	schedB   []float64
	gcB      []float64

	mu      sync.Mutex
	samples []sample
	held    []Resources

	lastCPU   time.Duration
	lastAt    time.Time
	lastSched []uint64
	lastGC    []uint64
	cpuOK     bool
	lastMach  machineStat
	machOK    bool
	lastSrv   time.Duration
	srvOK     bool

	stop chan struct{}
	done chan struct{}
}

// CPUReader is a set of processes' cumulative CPU time:
// localserver.Set. ok is false when it cannot be read.
type CPUReader interface {
	CPU() (time.Duration, bool)
}

// Option configures a Monitor.
type Option func(*readers)

// WithServer samples the target's local server processes too, so that
// their CPU is not counted as other processes'. A nil server is none.
func WithServer(server CPUReader) Option {
	return func(r *readers) {
		if server != nil {
			r.server = server.CPU
		}
	}
}

// Start begins sampling every interval (DefaultInterval when ≤ 0).
func Start(interval time.Duration, opts ...Option) *Monitor {
	src := defaultReaders
	src.resources = newResourceReader().now
	for _, o := range opts {
		o(&src)
	}
	return start(interval, src)
}

func start(interval time.Duration, src readers) *Monitor {
	if interval <= 0 {
		interval = DefaultInterval
	}
	m := &Monitor{
		interval: interval, cores: runtime.GOMAXPROCS(0), src: src,
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
	m.lastCPU, m.cpuOK = m.src.process()
	m.lastSrv, m.srvOK = m.readServer()
	m.lastMach, m.machOK = m.src.machine()
	m.lastAt = time.Now()
}

func (m *Monitor) readServer() (time.Duration, bool) {
	if m.src.server == nil {
		return 0, false
	}
	return m.src.server()
}

// take records one interval.
func (m *Monitor) take() {
	now := time.Now()
	metrics.Read(m.read)
	sched, gc := histCounts(m.read[0]), histCounts(m.read[1])
	cpu, ok := m.src.process()
	srv, srvOK := m.readServer()
	mach, machOK := m.src.machine()
	s := sample{at: now, sched: delta(sched, m.lastSched), gc: delta(gc, m.lastGC), cpu: -1, srv: -1}
	// CPU time is accounted in ticks, so a short interval (the last one, at
	// Stop) would turn one tick into an absurd share: judge CPU only over
	// intervals of at least half the sampling period, and never above what
	// the cores can give.
	if secs := now.Sub(m.lastAt).Seconds(); ok && m.cpuOK && secs >= m.interval.Seconds()/2 {
		s.cpu = min((cpu-m.lastCPU).Seconds()/secs, float64(runtime.NumCPU()))
		if srvOK && m.srvOK {
			s.srv = (srv - m.lastSrv).Seconds() / secs
		}
		if machOK && m.machOK {
			s.mach = diff(mach, m.lastMach)
			s.mach.ownShareBusy = ownShare(s.cpu, s.mach)
			s.mach.otherShareBusy = otherShare(s.cpu, max(s.srv, 0), s.mach)
		}
	}
	m.lastSched, m.lastGC, m.lastCPU, m.cpuOK, m.lastAt = sched, gc, cpu, ok, now
	m.lastMach, m.machOK, m.lastSrv, m.srvOK = mach, machOK, srv, srvOK
	var held Resources
	if m.src.resources != nil {
		held = m.src.resources()
	}
	m.mu.Lock()
	m.samples = append(m.samples, s)
	if m.src.resources != nil {
		m.held = append(m.held, held)
	}
	m.mu.Unlock()
}

// Resources is what the process held at each sample so far, oldest
// first.
func (m *Monitor) Resources() []Resources {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.held)
}

// ownShare is llmload's CPU (in cores) over the machine's busy cores; a
// machine that was nearly idle counts as all llmload's.
func ownShare(cpu float64, d machineDelta) float64 {
	busy := d.busy * float64(d.cores)
	if busy < 0.01 {
		return 1
	}
	return min(cpu/busy, 1)
}

// otherShare is the share of the machine's busy cores that neither
// llmload nor the local server (both in cores) used; none on a nearly
// idle machine.
func otherShare(cpu, server float64, d machineDelta) float64 {
	busy := d.busy * float64(d.cores)
	if busy < 0.01 {
		return 0
	}
	return min(max(busy-cpu-server, 0)/busy, 1)
}

// Window judges the samples taken within [start, end] (an interval that
// ended inside the window counts). No sample in the window: an empty,
// not-bound check.
func (m *Monitor) Window(start, end time.Time) engine.ClientCheck {
	c := engine.ClientCheck{Cores: m.cores}
	in := m.samplesIn(start, end)
	sched, gc := make([]uint64, len(m.lastSched)), make([]uint64, len(m.lastGC))
	for _, s := range in {
		c.CPUPercent = max(c.CPUPercent, 100*s.cpu)
		add(sched, s.sched)
		add(gc, s.gc)
	}
	c.SchedLatencyP99MS = 1000 * quantile(sched, m.schedB, 0.99)
	c.GCPauseP99MS = 1000 * quantile(gc, m.gcB, 0.99)
	c.GCPauseTotalMS = 1000 * total(gc, m.gcB)
	machineFigures(&c, in)
	c.Server = serverFigures(in)
	judge(&c, end.Sub(start))
	return c
}

func (m *Monitor) samplesIn(start, end time.Time) []sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	in := make([]sample, 0, len(m.samples))
	for _, s := range m.samples {
		if !s.at.Before(start) && !s.at.After(end.Add(m.interval)) {
			in = append(in, s)
		}
	}
	return in
}

// machineFigures sums the machine over the window's samples: the busiest
// sample, the mean run queue, llmload's share of all the busy CPU, and the
// samples other processes saturated.
func machineFigures(c *engine.ClientCheck, in []sample) {
	var own, busy, running float64
	for _, s := range in {
		d := s.mach
		if !d.ok {
			continue
		}
		c.MachineMeasured, c.MachineCores = true, d.cores
		c.Samples++
		c.MachineCPUPercent = max(c.MachineCPUPercent, round1(100*d.busy))
		c.StealPercent = max(c.StealPercent, round1(100*d.steal))
		own, busy, running = own+s.cpu, busy+d.busy*float64(d.cores), running+float64(d.running)
		if d.busy+d.steal >= MaxMachineBusy && d.otherShareBusy > MinOtherShare {
			c.SaturatedSamples++
		}
	}
	if c.Samples == 0 {
		return
	}
	c.RunQueue = round1(running / float64(c.Samples))
	c.OwnSharePercent = 100
	if busy >= 0.01*float64(c.Samples) {
		c.OwnSharePercent = round1(100 * min(own/busy, 1))
	}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// serverFigures are the local server's CPU over the window and the
// machine's split among llmload, the server and the rest; nil unless some
// sample measured the server and the machine both.
func serverFigures(in []sample) *engine.ServerCPU {
	var c engine.ServerCPU
	var n int
	var machine, own, server float64
	for _, s := range in {
		if s.srv < 0 || s.cpu < 0 || !s.mach.ok {
			continue
		}
		cores := float64(s.mach.cores)
		n++
		c.CPUPercent = max(c.CPUPercent, 100*s.srv)
		machine, own, server = machine+s.mach.busy, own+s.cpu/cores, server+s.srv/cores
	}
	if n == 0 {
		return nil
	}
	machine, own, server = machine/float64(n), own/float64(n), server/float64(n)
	c.CPUPercent = round1(c.CPUPercent)
	c.MachinePercent, c.OwnPercent, c.ServerPercent = round1(100*machine), round1(100*own), round1(100*server)
	c.OtherPercent = round1(100 * max(machine-own-server, 0))
	c.Disagrees = own+server-machine > MaxSplitExcess
	return &c
}
