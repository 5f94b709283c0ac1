package selfcheck

import (
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
)

const procStatText = `cpu  8838 0 2914 77297 252 0 32 29 0 0
cpu0 4289 0 1379 38984 25 0 6 13 0 0
cpu1 4548 0 1535 38312 226 0 25 16 0 0
intr 329120 0 0 0
ctxt 543514
procs_running 3
procs_blocked 0
`

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name string
		text string
		want machineStat
		ok   bool
	}{
		{"linux", procStatText, machineStat{total: 8838 + 2914 + 77297 + 252 + 32 + 29, idle: 77297 + 252, steal: 29, running: 3, cores: 2}, true},
		{"old kernel, no steal column", "cpu 10 0 10 80\ncpu0 10 0 10 80\nprocs_running 1\n", machineStat{total: 100, idle: 80, running: 1, cores: 1}, true},
		{"no cpu line", "procs_running 1\n", machineStat{running: 1}, false},
		{"garbage", "cpu a b c d\ncpu0 1 2 3 4\n", machineStat{cores: 1}, false},
		{"empty", "", machineStat{}, false},
	}
	for _, tt := range tests {
		got, ok := parseProcStat([]byte(tt.text))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseProcStat = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDiff(t *testing.T) {
	before := machineStat{total: 1000, idle: 800, steal: 0, cores: 2}
	tests := []struct {
		name        string
		now         machineStat
		ok          bool
		busy, steal float64
	}{
		{"half busy", machineStat{total: 1200, idle: 900, cores: 2, running: 2}, true, 0.5, 0},
		{"the reader alone is no run queue", machineStat{total: 1200, idle: 900, cores: 2, running: 1}, true, 0.5, 0},
		{"steal apart", machineStat{total: 1200, idle: 900, steal: 20, cores: 2}, true, 0.4, 0.1},
		{"no tick", before, false, 0, 0},
		{"counter went back", machineStat{total: 1200, idle: 700, cores: 2}, false, 0, 0},
	}
	for _, tt := range tests {
		d := diff(tt.now, before)
		if want := max(tt.now.running-1, 0); d.ok && d.running != want {
			t.Errorf("%s: running = %d, want %d (the reading thread left out)", tt.name, d.running, want)
		}
		if d.ok != tt.ok || d.busy != tt.busy || d.steal != tt.steal {
			t.Errorf("%s: diff = %+v, want ok %v busy %v steal %v", tt.name, d, tt.ok, tt.busy, tt.steal)
		}
	}
}

func TestJudge(t *testing.T) {
	// machine returns a check measured on a 2-core machine.
	machine := func(c engine.ClientCheck) engine.ClientCheck {
		c.Cores, c.MachineMeasured, c.MachineCores, c.Samples = 2, true, 2, 10
		return c
	}
	// server adds a local server's split of the machine (% of all cores).
	server := func(c engine.ClientCheck, own, srv, other float64) engine.ClientCheck {
		c = machine(c)
		c.Server = &engine.ServerCPU{CPUPercent: 2 * srv, MachinePercent: own + srv + other, OwnPercent: own, ServerPercent: srv, OtherPercent: other}
		return c
	}
	const (
		client  = "client"
		mach    = "machine"
		srvNote = "server" // Server.Reasons: a note, no flag
	)
	tests := []struct {
		name   string
		c      engine.ClientCheck
		bound  bool
		busy   bool
		why    string // in the reasons named by in
		whyNot string // in none
		in     string
	}{
		{"healthy", engine.ClientCheck{Cores: 2, CPUPercent: 60, SchedLatencyP99MS: 0.1, GCPauseP99MS: 0.05, GCPauseTotalMS: 2}, false, false, "", "", client},
		{"cpu", engine.ClientCheck{Cores: 2, CPUPercent: 195}, true, false, "CPU at 195% of the 200% that 2 cores give", "", client},
		{"scheduling, llmload busy", engine.ClientCheck{Cores: 2, CPUPercent: 120, SchedLatencyP99MS: 4}, true, false, "waited 4.00 ms", "", client},
		{"gc pauses, llmload busy", engine.ClientCheck{Cores: 2, CPUPercent: 80, GCPauseP99MS: 3}, true, false, "GC pauses p99 3.00 ms", "", client},
		{"gc share, llmload busy", engine.ClientCheck{Cores: 2, CPUPercent: 80, GCPauseTotalMS: 200}, true, false, "GC paused the process 2.0%", "", client},
		// The case: never blame llmload at 7% CPU.
		{"scheduling at 7% CPU, no machine figures", engine.ClientCheck{Cores: 2, CPUPercent: 7, SchedLatencyP99MS: 4}, false, true,
			"waited 4.00 ms (p99) to run, so " + lateEffect + " while llmload used only 7% CPU", "", mach},
		{"scheduling at 7% CPU, machine saturated by others",
			machine(engine.ClientCheck{CPUPercent: 7, SchedLatencyP99MS: 4, MachineCPUPercent: 97, OwnSharePercent: 4, SaturatedSamples: 6, RunQueue: 5.2}), false, true,
			"the machine's CPU was over 90% busy in 6 of 10 samples (highest 97%), llmload's share of the busy CPU 4%: other processes took the cores", "", mach},
		{"saturated by others, but llmload ran when it needed to",
			machine(engine.ClientCheck{CPUPercent: 7, SchedLatencyP99MS: 0.3, MachineCPUPercent: 97, OwnSharePercent: 4, SaturatedSamples: 6, RunQueue: 5.2}), false, false,
			"", "busy in 6 of 10", mach},
		{"run queue beyond cores",
			machine(engine.ClientCheck{CPUPercent: 7, SchedLatencyP99MS: 2.5, MachineCPUPercent: 80, OwnSharePercent: 5, RunQueue: 5.2}), false, true,
			"5.2 runnable threads on 2 cores on average (llmload 5% of the busy CPU)", "", mach},
		{"run queue beyond cores, llmload not delayed",
			machine(engine.ClientCheck{CPUPercent: 7, MachineCPUPercent: 80, OwnSharePercent: 5, RunQueue: 5.2}), false, false, "", "runnable threads", mach},
		{"a run queue just above the cores is the sampling's own bias",
			machine(engine.ClientCheck{CPUPercent: 24, SchedLatencyP99MS: 3, MachineCPUPercent: 68, OwnSharePercent: 15, RunQueue: 2.2}), false, true, "not llmload's own load", "runnable threads", mach},
		{"run queue of llmload's own threads is no machine trouble",
			machine(engine.ClientCheck{CPUPercent: 150, SchedLatencyP99MS: 3, MachineCPUPercent: 80, OwnSharePercent: 90, RunQueue: 3}), true, false, "waited 3.00 ms", "runnable threads", client},
		{"steal", machine(engine.ClientCheck{CPUPercent: 30, SchedLatencyP99MS: 3, MachineCPUPercent: 40, OwnSharePercent: 60, StealPercent: 12}), false, true, "withheld 12% of the CPU (steal)", "", mach},
		{"steal that did not delay llmload", machine(engine.ClientCheck{CPUPercent: 30, MachineCPUPercent: 40, OwnSharePercent: 60, StealPercent: 12}), false, false, "", "steal", mach},
		{"llmload busy and the main user: its own delay",
			machine(engine.ClientCheck{CPUPercent: 120, SchedLatencyP99MS: 3, MachineCPUPercent: 70, OwnSharePercent: 85}), true, false, "waited 3.00 ms", "", client},
		{"llmload busy but others busier: the machine's delay",
			machine(engine.ClientCheck{CPUPercent: 60, SchedLatencyP99MS: 3, MachineCPUPercent: 99, OwnSharePercent: 30, SaturatedSamples: 1}), false, true, "not llmload's own load", "", mach},
		{"both: llmload saturates its cores on a busy machine and waits",
			machine(engine.ClientCheck{CPUPercent: 190, SchedLatencyP99MS: 5, MachineCPUPercent: 99, OwnSharePercent: 40, SaturatedSamples: 2}), true, true, "over 90% busy in 2 of 10", "", mach},
		{"llmload saturates its cores on a busy machine, no wait: its own limit only",
			machine(engine.ClientCheck{CPUPercent: 190, MachineCPUPercent: 99, OwnSharePercent: 40, SaturatedSamples: 2}), true, false, "CPU at 190%", "", client},

		// A server on this machine: its CPU is what is measured.
		{"the issue's llama.cpp run: a busy local server on a quiet machine",
			server(engine.ClientCheck{CPUPercent: 12, SchedLatencyP99MS: 0.2, MachineCPUPercent: 60, OwnSharePercent: 11, RunQueue: 4.5}, 6, 46, 2), false, false,
			"", "runnable threads", mach},
		{"the local server saturates the machine and llmload waits: a note, no flag",
			server(engine.ClientCheck{CPUPercent: 12, SchedLatencyP99MS: 4, MachineCPUPercent: 99, OwnSharePercent: 6, RunQueue: 6}, 6, 89, 2), false, false,
			"waited 4.00 ms (p99) to run, so " + lateEffect + " while llmload used only 12% CPU (6% of the CPU the machine used, machine 99% busy) and the local server 89% of the machine (other processes 2%): the wait is the server's work sharing the cores",
			"runnable threads", srvNote},
		{"other processes beside the local server, and llmload waits",
			server(engine.ClientCheck{CPUPercent: 12, SchedLatencyP99MS: 4, MachineCPUPercent: 99, OwnSharePercent: 6, SaturatedSamples: 5, RunQueue: 5}, 6, 30, 61), false, true,
			"llmload's share of the busy CPU 6%, the local server's 31%: other processes took the cores", "", mach},
		{"other processes beside the local server, llmload not delayed",
			server(engine.ClientCheck{CPUPercent: 12, SchedLatencyP99MS: 0.4, MachineCPUPercent: 99, OwnSharePercent: 6, SaturatedSamples: 5, RunQueue: 5}, 6, 30, 61), false, false,
			"", "other processes", mach},
		{"others' run queue beside the local server",
			server(engine.ClientCheck{CPUPercent: 12, SchedLatencyP99MS: 3, MachineCPUPercent: 80, OwnSharePercent: 8, RunQueue: 5}, 6, 14, 55), false, true,
			"5.0 runnable threads on 2 cores on average (llmload's share of the busy CPU 8%, the local server's 19%)", "", mach},
		{"a local server and llmload busy: llmload's own delay",
			server(engine.ClientCheck{CPUPercent: 120, SchedLatencyP99MS: 3, MachineCPUPercent: 95, OwnSharePercent: 66}, 60, 30, 2), true, false, "waited 3.00 ms", "", client},
	}
	for _, tt := range tests {
		c := tt.c
		if c.Server != nil {
			srv := *c.Server
			c.Server = &srv
		}
		judge(&c, 10*time.Second)
		got := map[string]string{client: strings.Join(c.Reasons, "; "), mach: strings.Join(c.MachineReasons, "; ")}
		if c.Server != nil {
			got[srvNote] = strings.Join(c.Server.Reasons, "; ")
		}
		if c.Bound != tt.bound || c.MachineBusy != tt.busy {
			t.Errorf("%s: bound %v machine-busy %v, want %v %v (reasons %q)", tt.name, c.Bound, c.MachineBusy, tt.bound, tt.busy, got)
		}
		if !strings.Contains(got[tt.in], tt.why) {
			t.Errorf("%s: reasons %q, want %q in the %s ones", tt.name, got, tt.why, tt.in)
		}
		if all := got[client] + got[mach] + got[srvNote]; tt.whyNot != "" && strings.Contains(all, tt.whyNot) {
			t.Errorf("%s: reasons %q mention %q", tt.name, got, tt.whyNot)
		}
	}
}

// script replays readings: the process's CPU time and the machine's
// counters, one step per call after the baseline.
type script struct {
	mu      sync.Mutex
	cpu     time.Duration // cumulative
	srv     time.Duration // the local server's, cumulative
	stat    machineStat
	perStep []step
	calls   int
}

type step struct {
	ownCores    float64 // llmload's CPU over the step, in cores
	srvCores    float64 // the local server's
	busy, steal float64 // the machine's, shares of all cores
	running     int
}

const ticksPerSecond = 100 // USER_HZ

func (s *script) process() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls > 0 && s.calls <= len(s.perStep) {
		s.cpu += time.Duration(s.perStep[s.calls-1].ownCores * float64(time.Second))
	}
	return s.cpu, true
}

// server is the local server's CPU; called after process, before machine.
func (s *script) server() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls > 0 && s.calls <= len(s.perStep) {
		s.srv += time.Duration(s.perStep[s.calls-1].srvCores * float64(time.Second))
	}
	return s.srv, true
}

// machine advances the counters by the current step; called after process.
func (s *script) machine() (machineStat, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls > 0 && s.calls <= len(s.perStep) {
		st := s.perStep[s.calls-1]
		all := uint64(ticksPerSecond * s.stat.cores)
		s.stat.total += all
		s.stat.steal += uint64(st.steal * float64(all))
		s.stat.idle += all - uint64((st.busy+st.steal)*float64(all))
		s.stat.running = st.running
	}
	s.calls++
	return s.stat, true
}

func TestMonitorClassifiesWindows(t *testing.T) {
	quiet := step{ownCores: 0.1, busy: 0.1, running: 1}
	hog := step{ownCores: 0.14, busy: 0.97, running: 5} // another process takes both cores
	own := step{ownCores: 1.9, busy: 0.97, running: 3}  // llmload takes both cores
	// A local server takes most of both cores: llama.cpp on CPU.
	server := step{ownCores: 0.12, srvCores: 1.7, busy: 0.93, running: 6}
	// A local server and another process share the cores.
	crowded := step{ownCores: 0.12, srvCores: 0.6, busy: 0.97, running: 6}
	// llmload and the server used more than the machine counted.
	odd := step{ownCores: 0.1, srvCores: 1.9, busy: 0.5, running: 2}
	tests := []struct {
		name          string
		steps         []step
		noMachine     bool
		withServer    bool
		sched         float64 // the scheduling p99 judged, ms: the test process's own is not scripted
		bound, busy   bool
		cpu, machine  float64
		saturated     int
		wantMeasured  bool
		wantOwnShare  float64
		wantRunQueue  float64
		wantReasonSub string
		split         *engine.ServerCPU // nil: no local server measured
	}{
		{"quiet", []step{quiet, quiet, quiet, quiet}, false, false, 0, false, false, 10, 10, 0, true, 50, 0, "", nil},
		{"another process hogs the machine", []step{quiet, hog, hog, quiet}, false, false, 4, false, true, 14, 97, 2, true, 0, 2, "other processes took the cores", nil},
		{"another process hogs the machine, llmload never waits", []step{quiet, hog, hog, quiet}, false, false, 0.2, false, false, 14, 97, 2, true, 0, 2, "", nil},
		{"llmload hogs it", []step{own, own, own, own}, false, false, 4, true, false, 190, 97, 0, true, 97.9, 2, "CPU at 190%", nil},
		{"no /proc: only the process is judged", []step{hog, hog, hog, hog}, true, false, 0, false, false, 14, 0, 0, false, 0, 0, "", nil},
		{"a busy local server is no other process", []step{server, server, server, server}, false, true, 4, false, false, 12, 93, 0, true, 0, 2,
			"", &engine.ServerCPU{CPUPercent: 170, MachinePercent: 93, OwnPercent: 6, ServerPercent: 85, OtherPercent: 2}},
		{"another process beside the local server", []step{crowded, crowded, crowded, crowded}, false, true, 4, false, true, 12, 97, 4, true, 0, 2,
			"the local server's 31%: other processes took the cores", &engine.ServerCPU{CPUPercent: 60, MachinePercent: 97, OwnPercent: 6, ServerPercent: 30, OtherPercent: 61}},
		{"a split that does not add up says so", []step{odd, odd}, false, true, 0, false, false, 10, 50, 0, true, 0, 0,
			"", &engine.ServerCPU{CPUPercent: 190, MachinePercent: 50, OwnPercent: 5, ServerPercent: 95, OtherPercent: 0, Disagrees: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &script{stat: machineStat{cores: 2}, perStep: tt.steps}
				src := readers{process: sc.process, machine: sc.machine}
				if tt.withServer {
					src.server = sc.server
				}
				if tt.noMachine {
					src.machine = func() (machineStat, bool) { sc.machine(); return machineStat{}, false }
				}
				m := start(time.Second, src)
				begin := time.Now()
				time.Sleep(time.Duration(len(tt.steps)) * time.Second)
				synctest.Wait()
				end := time.Now()
				m.Stop()
				c := m.Window(begin, end)
				// The scheduling and GC delays are this test process's own,
				// read from the runtime, which the script does not fake and a
				// busy machine makes long: judge the window with the table's.
				c.SchedLatencyP99MS, c.GCPauseP99MS, c.GCPauseTotalMS = tt.sched, 0, 0
				c.Reasons, c.MachineReasons = nil, nil
				if c.Server != nil {
					c.Server.Reasons = nil
				}
				judge(&c, end.Sub(begin))
				if c.Bound != tt.bound || c.MachineBusy != tt.busy {
					t.Errorf("bound %v machine-busy %v, want %v %v (%q / %q)", c.Bound, c.MachineBusy, tt.bound, tt.busy, c.Reasons, c.MachineReasons)
				}
				if c.MachineMeasured != tt.wantMeasured || c.SaturatedSamples != tt.saturated {
					t.Errorf("measured %v, saturated %d; want %v, %d", c.MachineMeasured, c.SaturatedSamples, tt.wantMeasured, tt.saturated)
				}
				if got, want := round1(c.CPUPercent), tt.cpu; got != want {
					t.Errorf("CPU = %v%%, want %v%%", got, want)
				}
				if c.MachineCPUPercent != tt.machine {
					t.Errorf("machine CPU = %v%%, want %v%%", c.MachineCPUPercent, tt.machine)
				}
				if tt.wantMeasured && (c.OwnSharePercent < tt.wantOwnShare || c.OwnSharePercent > 100) {
					t.Errorf("own share = %v%%, want at least %v%%", c.OwnSharePercent, tt.wantOwnShare)
				}
				if c.RunQueue < tt.wantRunQueue {
					t.Errorf("run queue = %v, want at least %v", c.RunQueue, tt.wantRunQueue)
				}
				if !strings.Contains(strings.Join(append(c.Reasons, c.MachineReasons...), "; "), tt.wantReasonSub) {
					t.Errorf("reasons %q / %q, want %q", c.Reasons, c.MachineReasons, tt.wantReasonSub)
				}
				checkSplit(t, c.Server, tt.split)
			})
		})
	}
}

// checkSplit compares a window's local-server figures with the script's,
// within the tick rounding of the scripted counters.
func checkSplit(t *testing.T, got, want *engine.ServerCPU) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("local server figures %+v, want %+v", got, want)
	}
	if got == nil {
		return
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1 }
	if !near(got.CPUPercent, want.CPUPercent) || !near(got.MachinePercent, want.MachinePercent) || !near(got.OwnPercent, want.OwnPercent) ||
		!near(got.ServerPercent, want.ServerPercent) || !near(got.OtherPercent, want.OtherPercent) || got.Disagrees != want.Disagrees {
		t.Errorf("local server figures %+v, want %+v", *got, *want)
	}
	if got.OtherPercent < 0 {
		t.Errorf("other CPU %v%% below 0", got.OtherPercent)
	}
}
