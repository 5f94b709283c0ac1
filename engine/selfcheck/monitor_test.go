package selfcheck

import (
	"math"
	"runtime"
	"testing"
	"time"
)

func TestQuantileAndTotal(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0.001, 0.002, 0.004, math.Inf(1)}
	tests := []struct {
		counts []uint64
		q      float64
		want   float64
	}{
		{[]uint64{0, 0, 0, 0}, 0.99, 0},
		{[]uint64{0, 100, 0, 0}, 0.99, 0.002},
		{[]uint64{98, 1, 1, 0}, 0.99, 0.002},
		{[]uint64{98, 1, 0, 1}, 0.995, 0.004}, // the open last bucket reports its lower bound
		{[]uint64{50, 50, 0, 0}, 0.5, 0.001},
	}
	for _, tt := range tests {
		if got := quantile(tt.counts, buckets, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", tt.counts, tt.q, got, tt.want)
		}
	}
	if got, want := total([]uint64{0, 10, 0, 0}, buckets), 10*0.0015; math.Abs(got-want) > 1e-12 {
		t.Errorf("total = %v, want %v", got, want)
	}
	if got := quantile([]uint64{1}, []float64{0}, 0.5); got != 0 {
		t.Errorf("quantile on mismatched buckets = %v, want 0", got)
	}
}

func TestMonitorSeesCPUAndWindows(t *testing.T) {
	m := Start(20 * time.Millisecond)
	start := time.Now()
	cpu0, cpuOK := processCPU()
	deadline := start.Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	end := time.Now()
	cpu1, _ := processCPU()
	m.Stop()
	m.Stop() // idempotent
	c := m.Window(start, end)
	if c.Cores != runtime.GOMAXPROCS(0) {
		t.Errorf("cores = %d", c.Cores)
	}
	// The monitor's figure is the busiest sample, so at least about the
	// mean share of a core the spin got: compared with what the kernel
	// says it got, not with a whole core, which a busy machine never gives.
	if got := 100 * (cpu1 - cpu0).Seconds() / end.Sub(start).Seconds(); runtime.GOOS == "linux" && cpuOK && c.CPUPercent < got/2 {
		t.Errorf("CPU = %.0f%% while spinning took %.0f%% of a core for 300ms", c.CPUPercent, got)
	}
	empty := m.Window(end.Add(time.Hour), end.Add(2*time.Hour))
	if empty.Bound || empty.CPUPercent != 0 {
		t.Errorf("a window with no samples = %+v", empty)
	}
	_ = x
}

// fixedCPU is a CPUReader that reads a constant.
type fixedCPU struct{ ok bool }

func (f fixedCPU) CPU() (time.Duration, bool) { return time.Second, f.ok }

func TestWithServer(t *testing.T) {
	tests := []struct {
		name   string
		server CPUReader
		reads  bool
	}{
		{"none", nil, false},
		{"a server", fixedCPU{true}, true},
		{"a server that cannot be read", fixedCPU{false}, false},
	}
	for _, tt := range tests {
		var r readers
		WithServer(tt.server)(&r)
		m := &Monitor{src: r}
		if _, ok := m.readServer(); ok != tt.reads {
			t.Errorf("%s: the server reads %v, want %v", tt.name, ok, tt.reads)
		}
	}
}
