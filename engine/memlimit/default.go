package memlimit

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// DefaultShare is the share of the machine's memory (or of the cgroup's
// limit, when smaller) that Default allows: the rest is left to the
// system, the target when it runs on the same machine, and the page cache.
const DefaultShare = 0.5

// Default is DefaultShare of the smaller of the physical memory
// (/proc/meminfo MemTotal) and the cgroup's memory limit (v2 memory.max or
// v1 memory.limit_in_bytes); 0, meaning no bound, where neither can be
// read.
func Default() uint64 {
	return defaultFrom(os.ReadFile)
}

// cgroupFiles hold a memory limit, cgroup v2 first.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

func defaultFrom(read func(string) ([]byte, error)) uint64 {
	total := memTotal(read)
	for _, f := range cgroupFiles {
		if n := cgroupLimit(read, f); n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return uint64(float64(total) * DefaultShare)
}

// memTotal reads MemTotal from /proc/meminfo; 0 when it cannot.
func memTotal(read func(string) ([]byte, error)) uint64 {
	data, err := read("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit reads one cgroup limit file; 0 for "max", the v1 "no limit"
// value (close to 2^63) or an unreadable file.
func cgroupLimit(read func(string) ([]byte, error), path string) uint64 {
	data, err := read(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n >= 1<<62 {
		return 0
	}
	return n
}
