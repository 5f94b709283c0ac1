package localserver

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// procStat is what llmload reads of /proc/[pid]/stat.
type procStat struct {
	name  string // comm: the executable's name, never its arguments
	ppid  int
	ticks uint64 // utime + stime, in clock ticks
	start uint64 // starttime, in clock ticks since boot: tells a reused pid
}

// parseStat reads /proc/[pid]/stat. The name is in parentheses and may
// hold spaces and parentheses itself, so the fields are counted from the
// last ')'.
func parseStat(data []byte) (procStat, bool) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	// After the name: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22).
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseUint(f[11], 10, 64)
	stime, err3 := strconv.ParseUint(f[12], 10, 64)
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return procStat{}, false
	}
	return procStat{name: string(data[open+1 : end]), ppid: ppid, ticks: utime + stime, start: start}, true
}

func readStat(fsys fs.FS, pid int) (procStat, bool) {
	data, err := fs.ReadFile(fsys, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(data)
}

// userHZ is the tick /proc/[pid]/stat counts in on nearly every Linux
// build (USER_HZ); the auxiliary vector says so for sure.
const userHZ = 100

// atClkTck is the auxiliary vector's key of the clock tick rate.
const atClkTck = 17

// clockTick is one tick of /proc/[pid]/stat's CPU times, read from the
// process's auxiliary vector (AT_CLKTCK, what sysconf(_SC_CLK_TCK)
// returns); 1/userHZ when it cannot be read.
func clockTick(fsys fs.FS) time.Duration {
	data, err := fs.ReadFile(fsys, "self/auxv")
	if err != nil {
		return time.Second / userHZ
	}
	if hz := auxvValue(data, atClkTck, strconv.IntSize/8, binary.NativeEndian); hz > 0 && hz <= uint64(time.Second) {
		return time.Second / time.Duration(hz)
	}
	return time.Second / userHZ
}

// auxvValue finds key in an auxiliary vector: pairs of words of the
// given size, ending at key 0. 0 when it is not there.
func auxvValue(data []byte, key uint64, word int, order binary.ByteOrder) uint64 {
	read := func(b []byte) uint64 {
		if word == 4 {
			return uint64(order.Uint32(b))
		}
		return order.Uint64(b)
	}
	for i := 0; i+2*word <= len(data); i += 2 * word {
		k := read(data[i : i+word])
		switch k {
		case 0:
			return 0
		case key:
			return read(data[i+word : i+2*word])
		}
	}
	return 0
}
