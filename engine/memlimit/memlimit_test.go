package memlimit

import (
	"context"
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"
)

func TestWatcherCancelsWhenTheLimitIsCrossed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var used atomic.Uint64
		used.Store(100 * MB)
		w := Start(256*MB, Options{Interval: 50 * time.Millisecond, Read: func() uint64 { return used.Load() }, NoGCLimit: true})
		defer w.Stop()
		time.Sleep(time.Second)
		if err := w.Context().Err(); err != nil {
			t.Fatalf("canceled at 100 MB of 256 MB: %v", err)
		}
		used.Store(300 * MB)
		start := time.Now()
		<-w.Context().Done()
		if got, want := time.Since(start), 50*time.Millisecond; got > want {
			t.Errorf("canceled %v after the crossing, want within %v", got, want)
		}
		var ex *ExceededError
		if !errors.As(context.Cause(w.Context()), &ex) {
			t.Fatalf("cause = %v, want an *ExceededError", context.Cause(w.Context()))
		}
		if got, want := ex.Error(), "memory limit 256 MB exceeded"; got != want {
			t.Errorf("message = %q, want %q", got, want)
		}
		if got, want := w.Peak(), uint64(300*MB); got != want {
			t.Errorf("peak = %d, want %d", got, want)
		}
		if w.Exceeded() != ex {
			t.Errorf("Exceeded() = %v, want the cause", w.Exceeded())
		}
	})
}

// TestWatcherPace: far under its bound the watcher reads ten times less
// often, and at its interval again once the room left is FarBelow or
// less; a crossing from far below is seen at the slow pace's next read.
func TestWatcherPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 8 << 30
		var used atomic.Uint64
		var reads atomic.Int64
		used.Store(100 * MB)
		w := Start(limit, Options{Interval: 25 * time.Millisecond, NoGCLimit: true,
			Read: func() uint64 { reads.Add(1); return used.Load() }})
		defer w.Stop()
		count := func(d time.Duration) int64 {
			before := reads.Load()
			time.Sleep(d)
			synctest.Wait()
			return reads.Load() - before
		}
		time.Sleep(time.Millisecond) // past the first read
		if got := count(time.Second); got != 4 {
			t.Errorf("%d reads in a second at 100 MB of 8 GiB, want 4 (every 250 ms)", got)
		}
		used.Store(limit - FarBelow) // within FarBelow: the short interval again
		time.Sleep(250 * time.Millisecond)
		if got := count(time.Second); got != 40 {
			t.Errorf("%d reads in a second at 6 GiB of 8 GiB, want 40 (every 25 ms)", got)
		}
		used.Store(100 * MB)
		time.Sleep(250 * time.Millisecond)
		used.Store(limit + 1)
		start := time.Now()
		<-w.Context().Done()
		if got := time.Since(start); got > 250*time.Millisecond {
			t.Errorf("a crossing from far below seen after %v, want within 250 ms", got)
		}
	})
}

func TestWatcherStopsWithoutCanceling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Start(MB, Options{Read: func() uint64 { return 0 }, NoGCLimit: true})
		time.Sleep(time.Second)
		w.Stop()
		w.Stop()
		if err := w.Context().Err(); err != nil {
			t.Errorf("context ended: %v", err)
		}
	})
}

func TestNoLimitWatchesNothing(t *testing.T) {
	w := Start(0, Options{Read: func() uint64 { t.Error("read with no limit"); return 0 }})
	w.Stop()
	if w.Context().Err() != nil || w.Exceeded() != nil {
		t.Error("a zero limit canceled")
	}
}

func TestUsedIsPlausible(t *testing.T) {
	if got := Used(); got < MB || got > 1<<40 {
		t.Errorf("Used() = %d bytes", got)
	}
}

func TestParseSize(t *testing.T) {
	tests := map[string]struct {
		in   string
		want uint64
		bad  bool
	}{
		"GB":          {in: "2GB", want: 2 << 30},
		"MB":          {in: "512MB", want: 512 << 20},
		"lower":       {in: "256mb", want: 256 << 20},
		"G":           {in: "1.5G", want: 3 << 29},
		"MiB":         {in: "300MiB", want: 300 << 20},
		"bytes":       {in: "1048576", want: 1 << 20},
		"space":       {in: " 64 MB ", want: 64 << 20},
		"unit only":   {in: "MB", bad: true},
		"bad unit":    {in: "5XB", bad: true},
		"negative":    {in: "-1GB", bad: true},
		"words":       {in: "lots", bad: true},
		"too large":   {in: "1e30GB", bad: true},
		"empty":       {in: "", bad: true},
		"double unit": {in: "5MBGB", bad: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if tt.bad {
				if err == nil {
					t.Errorf("ParseSize(%q) = %d, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDefaultTakesHalfOfTheSmallerBound(t *testing.T) {
	meminfo := "MemTotal:       24683520 kB\nMemFree:        1000 kB\n"
	tests := map[string]struct {
		files map[string]string
		want  uint64
	}{
		"no cgroup":      {files: map[string]string{"/proc/meminfo": meminfo}, want: 24683520 << 9},
		"v2 max":         {files: map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "max\n"}, want: 24683520 << 9},
		"v2 smaller":     {files: map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "2147483648\n"}, want: 1 << 30},
		"v1 unlimited":   {files: map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, want: 24683520 << 9},
		"v1 smaller":     {files: map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824"}, want: 1 << 29},
		"cgroup only":    {files: map[string]string{"/sys/fs/cgroup/memory.max": "1073741824"}, want: 1 << 29},
		"nothing at all": {files: map[string]string{}, want: 0},
		"v1 nested": {files: map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup":                                           "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":                 "9223372036854771712",
			"/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "1073741824\n"}, want: 1 << 29},
		"v1 parent": {files: map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup": "4:cpu,memory:/a/b\n",
			"/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": "9223372036854771712",
			"/sys/fs/cgroup/memory/a/memory.limit_in_bytes":   "2147483648"}, want: 1 << 30},
		"v2 nested": {files: map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup": "0::/system.slice/ci.service\n",
			"/sys/fs/cgroup/system.slice/ci.service/memory.max": "536870912\n",
			"/sys/fs/cgroup/system.slice/memory.max":            "max"}, want: 1 << 28},
		"other controller": {files: map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup":                             "3:cpuset:/x\n",
			"/sys/fs/cgroup/cpuset/x/memory.limit_in_bytes": "1024"}, want: 24683520 << 9},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if s, ok := tt.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			if got := defaultFrom(read, noRlimit); got != tt.want {
				t.Errorf("default = %d, want %d", got, tt.want)
			}
		})
	}
}

func noRlimit(int) (uint64, bool) { return 0, false }

// TestDefaultUnderAddressLimits: ulimit -v and -d bound the default by
// AddressShare of them, when that is the smallest bound.
func TestDefaultUnderAddressLimits(t *testing.T) {
	meminfo := map[string]string{"/proc/meminfo": "MemTotal:       24683520 kB\n"}
	read := func(p string) ([]byte, error) {
		if s, ok := meminfo[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	tests := map[string]struct {
		limits map[int]uint64
		want   uint64
	}{
		"none":          {nil, 24683520 << 9},
		"ulimit -v 4GB": {map[int]uint64{unix.RLIMIT_AS: 4 << 30}, 512 << 20},
		"ulimit -d 2GB": {map[int]uint64{unix.RLIMIT_DATA: 2 << 30}, 256 << 20},
		"both":          {map[int]uint64{unix.RLIMIT_AS: 4 << 30, unix.RLIMIT_DATA: 8 << 30}, 512 << 20},
		"huge -v":       {map[int]uint64{unix.RLIMIT_AS: 1 << 50}, 24683520 << 9},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			limit := func(r int) (uint64, bool) { n, ok := tt.limits[r]; return n, ok }
			if got := defaultFrom(read, limit); got != tt.want {
				t.Errorf("default = %d, want %d", got, tt.want)
			}
		})
	}
}
