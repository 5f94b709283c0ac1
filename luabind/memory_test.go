package luabind

import (
	"context"
	"runtime"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
)

// idleVUBytes is the heap that n idle VUs of the script at path hold, per VU.
func idleVUBytes(tb testing.TB, path string, n int) float64 {
	tb.Helper()
	s, err := Compile(path, Options{})
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
		perVU = idleVUBytes(b, "testdata/basic.lua", 200)
	}
	b.ReportMetric(perVU, "B/vu")
}

// TestIdleVUMemory keeps an idle VU within 48 KB (14–19 KB measured; 63
// KB before the base functions, require and math.random were shared, the
// call stack grown in segments and an unread options table dropped; 85 KB
// before the libraries were shared).
func TestIdleVUMemory(t *testing.T) {
	const budget = 48 << 10
	for _, path := range []string{"testdata/basic.lua", "../scenarios/chat_mix.lua",
		"../scenarios/multi_turn.lua", "../scenarios/agent_swarm.lua"} {
		perVU := idleVUBytes(t, path, 100)
		t.Logf("%s: %.0f B per idle VU", path, perVU)
		if perVU > budget {
			t.Errorf("%s: an idle VU holds %.0f B, want < %d B", path, perVU, budget)
		}
	}
}
