package selfcheck

import (
	"fmt"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/rxtime"
)

// Limits beyond which a stage is client-bound or machine-busy.
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

	// ClientBusyShare is the share of its cores llmload must use for a
	// scheduling or GC delay to be its own doing: an idle process whose
	// goroutines wait to run is waiting for a CPU someone else holds (or
	// that a CPU quota withholds), so it is never blamed at 7% CPU.
	ClientBusyShare = 0.25
	// MinOwnShare is llmload's share of the machine's busy CPU below which
	// a delay it saw is not its own load's.
	MinOwnShare = 0.5
	// MinOtherShare is the share of the machine's busy CPU that processes
	// other than llmload and the local server must exceed for the
	// machine's load to be theirs. With no local server it is the
	// complement of MinOwnShare.
	MinOtherShare = 0.5
	// MaxSplitExcess is the share of all the machine's cores by which
	// llmload and the local server together may exceed what the machine
	// counted busy (tick rounding, reads a few microseconds apart) before
	// the split is said to disagree.
	MaxSplitExcess = 0.05
	// MaxMachineBusy is the busy share (steal included) of all the
	// machine's cores beyond which a sample counts as saturated.
	MaxMachineBusy = 0.90
	// MaxSteal is the share of CPU time the hypervisor may give to other
	// guests before the machine counts as busy.
	MaxSteal = 0.05
	// MaxRunQueue is the mean number of runnable threads per core beyond
	// which threads queue for a CPU. Above 1, not at it: procs_running is
	// read at an instant, the tick on which llmload's own timers also wake,
	// so it reads high; at 1.5 a queue is there most of the time.
	MaxRunQueue = 1.5
)

// judge classifies a window from its figures: Bound and Reasons for
// llmload's own load, MachineBusy and MachineReasons for a machine whose
// CPU other processes (or the hypervisor) held.
//
// Scheduling and GC delays beyond the limits are facts about the timings
// either way; they are blamed on llmload only when it was using the CPU
// (ClientBusyShare of its cores and, where the machine is measured,
// MinOwnShare of the machine's busy CPU). Otherwise they are the local
// server's when it held more of the rest than other processes did (noted
// in Server.Reasons, not flagged: a server on llmload's machine shares its
// cores by design), else the machine's.
//
// The machine's own signs — samples other processes saturated, steal, a
// run queue of other processes' threads — make a window machine-busy only
// when such a delay shows that llmload's timings felt them: a busy machine
// whose CPU llmload got when it needed it distorted nothing llmload timed.
func judge(c *engine.ClientCheck, window time.Duration) {
	cores := max(c.Cores, 1)
	if c.CPUPercent >= 100*MaxCPUShare*float64(cores) {
		c.Reasons = append(c.Reasons, fmt.Sprintf("CPU at %.0f%% of the %d%% that %d %s", c.CPUPercent, 100*cores, cores, plural(cores, "core gives", "cores give")))
	}
	delays := delayReasons(c, window)
	switch {
	case len(delays) == 0:
	case ownLoad(c):
		c.Reasons = append(c.Reasons, delays...)
	case serverHeld(c):
		for _, d := range delays {
			c.Server.Reasons = append(c.Server.Reasons, d+" while llmload used only "+ownText(c)+" and the local server "+
				fmt.Sprintf("%.0f%% of the machine (other processes %.0f%%)", c.Server.ServerPercent, c.Server.OtherPercent)+
				": the wait is the server's work sharing the cores, which is what is measured")
		}
	default:
		for _, d := range delays {
			c.MachineReasons = append(c.MachineReasons, d+" while llmload used only "+ownText(c)+": the wait is not llmload's own load")
		}
	}
	if len(delays) > 0 {
		c.MachineReasons = append(c.MachineReasons, machineReasons(c)...)
	}
	c.Bound, c.MachineBusy = len(c.Reasons) > 0, len(c.MachineReasons) > 0
}

// serverHeld reports whether the local server, rather than other
// processes, used the CPU llmload did not.
func serverHeld(c *engine.ClientCheck) bool {
	return c.Server != nil && c.Server.ServerPercent >= c.Server.OtherPercent
}

// otherSharePercent is the share of the machine's busy CPU that neither
// llmload nor the local server used, over the window.
func otherSharePercent(c *engine.ClientCheck) float64 {
	if s := c.Server; s != nil {
		if s.MachinePercent <= 0 {
			return 0
		}
		return 100 * s.OtherPercent / s.MachinePercent
	}
	return 100 - c.OwnSharePercent
}

// sharesText is who used the machine's busy CPU: llmload's share, and the
// local server's when there is one.
func sharesText(c *engine.ClientCheck) string {
	t := fmt.Sprintf("llmload's share of the busy CPU %.0f%%", c.OwnSharePercent)
	if s := c.Server; s != nil && s.MachinePercent > 0 {
		t += fmt.Sprintf(", the local server's %.0f%%", 100*s.ServerPercent/s.MachinePercent)
	}
	return t
}

// ownLoad reports whether llmload itself was busy enough to cause the
// delays it saw.
func ownLoad(c *engine.ClientCheck) bool {
	if c.CPUPercent < 100*ClientBusyShare*float64(max(c.Cores, 1)) {
		return false
	}
	return !c.MachineMeasured || c.OwnSharePercent >= 100*MinOwnShare
}

func ownText(c *engine.ClientCheck) string {
	s := fmt.Sprintf("%.0f%% CPU", c.CPUPercent)
	if c.MachineMeasured {
		s += fmt.Sprintf(" (%.0f%% of the CPU the machine used, machine %.0f%% busy)", c.OwnSharePercent, c.MachineCPUPercent)
	}
	return s
}

// delayReasons names the scheduling and GC delays beyond the limits.
func delayReasons(c *engine.ClientCheck, window time.Duration) []string {
	var out []string
	if ms := float64(MaxSchedLatency) / 1e6; c.SchedLatencyP99MS > ms {
		out = append(out, fmt.Sprintf("runnable goroutines waited %.2f ms (p99) to run, so %s", c.SchedLatencyP99MS, lateEffect))
	}
	if ms := float64(MaxGCPause) / 1e6; c.GCPauseP99MS > ms {
		out = append(out, fmt.Sprintf("GC pauses p99 %.2f ms", c.GCPauseP99MS))
	}
	if w := window.Seconds() * 1000; w > 0 && c.GCPauseTotalMS > MaxGCShare*w {
		out = append(out, fmt.Sprintf("GC paused the process %.1f%% of the time", 100*c.GCPauseTotalMS/w))
	}
	return out
}

// lateEffect says what goroutines that wait to run do to the figures.
// Where a stream event keeps the kernel's receive time (engine/rxtime),
// only requests that start late and events that pile up behind a late
// read, which share the newest one's arrival, are touched.
var lateEffect = func() string {
	if rxtime.Available {
		return "requests may start that late, and events that pile up behind a late read carry the newest one's arrival"
	}
	return "chunk timestamps may be that late"
}()

// runQueueShares is sharesText as the run-queue reason has always
// worded it without a local server.
func runQueueShares(c *engine.ClientCheck) string {
	if c.Server == nil {
		return fmt.Sprintf("llmload %.0f%% of the busy CPU", c.OwnSharePercent)
	}
	return sharesText(c)
}

// machineReasons names what shows other processes (or the hypervisor)
// holding the CPU; judge counts them only where llmload felt it.
func machineReasons(c *engine.ClientCheck) []string {
	if !c.MachineMeasured {
		return nil
	}
	var out []string
	if c.SaturatedSamples > 0 {
		out = append(out, fmt.Sprintf("the machine's CPU was over %.0f%% busy in %d of %d %s (highest %.0f%%), %s: other processes took the cores",
			100*MaxMachineBusy, c.SaturatedSamples, c.Samples, plural(c.Samples, "sample", "samples"), c.MachineCPUPercent, sharesText(c)))
	}
	if c.StealPercent >= 100*MaxSteal {
		out = append(out, fmt.Sprintf("the hypervisor withheld %.0f%% of the CPU (steal)", c.StealPercent))
	}
	if c.RunQueue > MaxRunQueue*float64(c.MachineCores) && otherSharePercent(c) > 100*MinOtherShare {
		out = append(out, fmt.Sprintf("%.1f runnable threads on %d %s on average (%s): threads queued for a CPU",
			c.RunQueue, c.MachineCores, plural(c.MachineCores, "core", "cores"), runQueueShares(c)))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
