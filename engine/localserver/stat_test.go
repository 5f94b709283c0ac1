package localserver

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"
	"testing/fstest"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

// stat is a /proc/[pid]/stat line with the fields llmload reads.
func stat(pid int, name string, ppid int, utime, stime, start uint64) string {
	return fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 1000 0 0 0 %d %d 0 0 20 0 4 0 %d 100000000 2000 18446744073709551615 1 1 0\n",
		pid, name, ppid, pid, pid, utime, stime, start)
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want procStat
		ok   bool
	}{
		{"plain", stat(42, "llama-server", 1, 120, 30, 777), procStat{name: "llama-server", ppid: 1, ticks: 150, start: 777}, true},
		{"a name with spaces and parentheses", stat(43, "a) b (c", 42, 1, 2, 3), procStat{name: "a) b (c", ppid: 42, ticks: 3, start: 3}, true},
		{"cut short", "44 (x) S 1 2 3", procStat{}, false},
		{"no name", "45 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21", procStat{}, false},
		{"not numbers", "46 (x) S one 2 3 4 5 6 7 8 9 10 a b 13 14 15 16 17 18 19 20 21", procStat{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStat([]byte(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseStat = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// auxv is an auxiliary vector of 64-bit little-endian words.
func auxv(pairs ...uint64) []byte {
	var b []byte
	for _, v := range pairs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

func TestClockTick(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		want time.Duration
	}{
		{"no auxv: USER_HZ", fstest.MapFS{}, 10 * time.Millisecond},
		{"AT_CLKTCK 250", fstest.MapFS{"self/auxv": {Data: auxv(6, 4096, atClkTck, 250, 0, 0)}}, 4 * time.Millisecond},
		{"no AT_CLKTCK", fstest.MapFS{"self/auxv": {Data: auxv(6, 4096, 0, 0, atClkTck, 250)}}, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 && len(tt.fsys) > 0 {
			continue // the fake vectors are little-endian
		}
		if got := clockTick(tt.fsys); got != tt.want {
			t.Errorf("%s: tick %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := auxvValue([]byte{17, 0, 0, 0, 50, 0, 0, 0}, atClkTck, 4, binary.LittleEndian); got != 50 {
		t.Errorf("32-bit auxv: %d, want 50", got)
	}
}
