package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCLimit(t *testing.T) {
	for _, tt := range []struct {
		live, ceiling uint64
		want          int64
	}{{0, 0, FloorBytes}, {50 << 20, 0, FloorBytes}, {800 << 20, 0, 1600 << 20},
		{800 << 20, 1 << 30, 1 << 30}, {0, 100 << 20, 100 << 20}} {
		if got := gcLimit(tt.live, tt.ceiling); got != tt.want {
			t.Errorf("gcLimit(%d MB, ceiling %d MB) = %d MB, want %d MB", tt.live>>20, tt.ceiling>>20, got>>20, tt.want>>20)
		}
	}
}

func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "") // present: the user's setting wins
	stop := TuneGC(0)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("with GOGC set, the GC target became %d", p)
	}
	stop()

	unsetenv(t, "GOGC")
	unsetenv(t, "GOMEMLIMIT")
	before := debug.SetMemoryLimit(-1)
	stop = TuneGC(0)
	if p := debug.SetGCPercent(GCPercent); p != GCPercent {
		t.Errorf("GC target %d, want %d", p, GCPercent)
	}
	if l := debug.SetMemoryLimit(-1); l < FloorBytes || l == math.MaxInt64 {
		t.Errorf("memory limit %d, want at least %d", l, FloorBytes)
	}
	stop()
	stop() // a second stop does nothing
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("after stop the limit is %d, want %d back", l, before)
	}
}

// unsetenv removes name for the test, restoring it after.
func unsetenv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "") // registers the restore
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// TestAfterEachGC: the hook runs after each collection until it declines.
func TestAfterEachGC(t *testing.T) {
	calls := make(chan struct{}, 16)
	n := 0
	afterEachGC(func() bool {
		n++
		calls <- struct{}{}
		return n < 3
	})
	for i := range 3 {
		runtime.GC()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("no call after collection %d", i+1)
		}
	}
	runtime.GC()
	runtime.GC()
	select {
	case <-calls:
		t.Error("called again after it declined")
	case <-time.After(100 * time.Millisecond):
	}
}
