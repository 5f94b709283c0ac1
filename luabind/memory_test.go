package luabind

import (
	"context"
	"runtime"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
)

// idleVUBytes is the heap that n idle VUs of testdata/basic.lua hold, per VU.
func idleVUBytes(tb testing.TB, n int) float64 {
	tb.Helper()
	s, err := Compile("testdata/basic.lua", Options{})
	if err != nil {
		tb.Fatal(err)
	}
	r := s.NewRunner(api.RunnerConfig{Client: &fakeClient{}, Sink: &fakeSink{}})
	var before, after runtime.MemStats
	settleHeap()
	runtime.ReadMemStats(&before)
	vus := make([]engine.VU, n)
	for i := range vus {
		if vus[i], err = r.NewVU(context.Background(), i+1); err != nil {
			tb.Fatal(err)
		}
	}
	settleHeap()
	runtime.ReadMemStats(&after)
	for _, v := range vus {
		v.Close()
	}
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}

// settleHeap collects twice: gopher-lua returns a closed state's call
// frames to a sync.Pool, whose victim cache keeps what they point at alive
// through one collection.
func settleHeap() {
	runtime.GC()
	runtime.GC()
}

// BenchmarkIdleVU reports what an idle VU costs: its LState with the
// standard libraries, the llmload module and a small script's globals.
func BenchmarkIdleVU(b *testing.B) {
	var perVU float64
	for b.Loop() {
		perVU = idleVUBytes(b, 200)
	}
	b.ReportMetric(perVU, "B/vu")
}

// TestIdleVUMemory keeps an idle VU within the 64 KB budget that lets a
// run hold ten thousand of them (63 KB when the libraries became shared,
// 85 KB before).
func TestIdleVUMemory(t *testing.T) {
	const budget = 64 << 10
	perVU := idleVUBytes(t, 100)
	t.Logf("%.0f B per idle VU", perVU)
	if perVU > budget {
		t.Errorf("an idle VU holds %.0f B, want < %d B", perVU, budget)
	}
}
