package memlimit

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultShare is the share of the machine's memory (or of the cgroup's
// limit, when smaller) that Default allows: the rest is left to the
// system, the target when it runs on the same machine, and the page cache.
const DefaultShare = 0.5

// AddressShare is the share of an address-space or data limit (ulimit -v,
// ulimit -d) that Default allows. It is far smaller than DefaultShare
// because such a limit fails an allocation outright, and the Go runtime
// dies of it: a script doubling a string crosses the bound inside one
// concatenation, and a guarded Lua state (Guard) may make one more before
// it looks, so that doubling (four times the bound, with the old string
// and the builder's buffer) must still fit. Under ulimit -v 4 GB a bound
// of 1 GB did not; 512 MB and 768 MB stopped every try.
const AddressShare = 0.125

// Default is the bound llmload runs under without --max-memory: the
// smallest of DefaultShare of the physical memory (/proc/meminfo
// MemTotal) and of the memory limit of the process's cgroup (v2
// memory.max, v1 memory.limit_in_bytes, its own or any ancestor's), and
// AddressShare of RLIMIT_AS and RLIMIT_DATA; 0, meaning no bound, where
// none can be read.
func Default() uint64 {
	return defaultFrom(os.ReadFile, rlimit)
}

// rlimit returns a resource's soft limit; false when there is none.
func rlimit(resource int) (uint64, bool) {
	var l unix.Rlimit
	if err := unix.Getrlimit(resource, &l); err != nil || l.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	return l.Cur, true
}

func defaultFrom(read func(string) ([]byte, error), limit func(int) (uint64, bool)) uint64 {
	total := memTotal(read)
	if n := cgroupMin(read); n > 0 && (total == 0 || n < total) {
		total = n
	}
	bound := uint64(float64(total) * DefaultShare)
	for _, r := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		if n, ok := limit(r); ok {
			if b := uint64(float64(n) * AddressShare); bound == 0 || b < bound {
				bound = max(b, 1)
			}
		}
	}
	return bound
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

// cgroupMin is the smallest memory limit on the process's cgroup path:
// its own cgroup's and every ancestor's, v2 and v1, as /proc/self/cgroup
// names them under /sys/fs/cgroup, and the mount's root files (inside a
// container's cgroup namespace, the process's own); 0 when none is set.
func cgroupMin(read func(string) ([]byte, error)) uint64 {
	files := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	if data, err := read("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			// "0::/path" (v2) or "4:memory:/path" (v1).
			f := strings.SplitN(line, ":", 3)
			if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
				continue
			}
			var root, file string
			switch {
			case f[0] == "0" && f[1] == "":
				root, file = "/sys/fs/cgroup", "memory.max"
			case hasController(f[1], "memory"):
				root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
			default:
				continue
			}
			for p := path.Clean(f[2]); p != "/" && p != "."; p = path.Dir(p) {
				files = append(files, path.Join(root, p, file))
			}
		}
	}
	var low uint64
	for _, f := range files {
		if n := cgroupLimit(read, f); n > 0 && (low == 0 || n < low) {
			low = n
		}
	}
	return low
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
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
