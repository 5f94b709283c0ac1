package selfcheck

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// machineStat is one reading of /proc/stat: cumulative CPU time of the
// whole machine in clock ticks, and the runnable threads at that moment.
type machineStat struct {
	total, idle, steal uint64 // idle includes iowait: a CPU waiting on I/O is free to run us
	running            int    // procs_running, this reading thread included
	cores              int    // cpuN lines: online CPUs
}

// machineReader reads the machine's CPU counters; ok is false where they
// cannot be read (not Linux, no /proc).
type machineReader func() (machineStat, bool)

// procStat reads /proc/stat.
func procStat() (machineStat, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineStat{}, false
	}
	return parseProcStat(data)
}

// parseProcStat reads the aggregate "cpu" line (user nice system idle
// iowait irq softirq steal ...; guest time is already inside user), the
// per-CPU lines and procs_running.
func parseProcStat(data []byte) (machineStat, bool) {
	var m machineStat
	found := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
		case f[0] == "cpu":
			found = cpuLine(&m, f[1:])
		case strings.HasPrefix(f[0], "cpu"):
			m.cores++
		case f[0] == "procs_running" && len(f) == 2:
			m.running, _ = strconv.Atoi(f[1])
		}
	}
	return m, found && m.cores > 0
}

func cpuLine(m *machineStat, f []string) bool {
	if len(f) < 4 {
		return false
	}
	var v [8]uint64
	for i := 0; i < len(v) && i < len(f); i++ {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return false
		}
		v[i] = n
	}
	for _, n := range v {
		m.total += n
	}
	m.idle, m.steal = v[3]+v[4], v[7]
	return true
}

// machineDelta is the machine over one interval, as shares of all its
// cores (0..1).
type machineDelta struct {
	ok           bool
	busy, steal  float64 // busy excludes steal
	running      int     // runnable threads but the one reading /proc/stat
	cores        int
	ownShareBusy float64 // llmload's CPU over the machine's busy CPU; filled in by take
	// otherShareBusy is the share of the busy CPU neither llmload nor
	// the local server used; filled in by take.
	otherShareBusy float64
}

// diff turns two readings into the interval between them; not ok when
// no tick passed or a counter went backwards (a CPU went offline).
func diff(now, before machineStat) machineDelta {
	if now.total <= before.total || now.idle < before.idle || now.steal < before.steal {
		return machineDelta{}
	}
	t := float64(now.total - before.total)
	idle, steal := float64(now.idle-before.idle), float64(now.steal-before.steal)
	return machineDelta{
		ok: true, busy: max(t-idle-steal, 0) / t, steal: steal / t,
		running: max(now.running-1, 0), cores: now.cores,
	}
}
