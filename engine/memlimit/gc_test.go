package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{{0, GCPercent}, {10 << 20, GCPercent}, {24 << 20, 400}, {48 << 20, 200}, {96 << 20, 100},
		{192 << 20, 50}, {2 << 30, MinGCPercent}} {
		if got := gcPercent(tt.live); got != tt.want {
			t.Errorf("gcPercent(%d MB) = %d, want %d", tt.live>>20, got, tt.want)
		}
	}
}

func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "") // present: the user's setting wins
	unsetenv(t, "GOMEMLIMIT")
	before := debug.SetMemoryLimit(-1)
	stop := TuneGC(1 << 30)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("with GOGC set, the GC target became %d", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("with GOGC set, the memory limit is %d, want the ceiling", l)
	}
	stop()
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("after stop the limit is %d, want %d back", l, before)
	}

	unsetenv(t, "GOGC")
	stop = TuneGC(0)
	if p := debug.SetGCPercent(GCPercent); p < MinGCPercent || p > GCPercent {
		t.Errorf("GC target %d, want within [%d, %d]", p, MinGCPercent, GCPercent)
	}
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("without a ceiling the limit became %d", l)
	}
	stop()
	stop() // a second stop does nothing
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("after stop the GC target is %d, want 100 back", p)
	}
}

// TestTuneGCFollowsTheLiveHeap: a heap that grows lowers the target at
// the next collection.
func TestTuneGCFollowsTheLiveHeap(t *testing.T) {
	unsetenv(t, "GOGC")
	unsetenv(t, "GOMEMLIMIT")
	stop := TuneGC(0)
	defer stop()
	runtime.GC()
	held := make([][]byte, 0, 200)
	for range 200 { // 200 MB live: a target of about 48
		held = append(held, make([]byte, 1<<20))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		p := s[0].Value.Uint64()
		if p >= MinGCPercent && p <= 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC target %d with 200 MB live, want at most 50", p)
		}
		time.Sleep(10 * time.Millisecond) // the finalizer goroutine sets it after the collection
	}
	runtime.KeepAlive(held)
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
