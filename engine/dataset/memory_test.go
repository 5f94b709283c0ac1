package dataset

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// handle is what luabind keeps per VU: the shared pool and a cursor.
type handle struct {
	pool   *Pool
	cursor int
}

// writeJSONL writes about size bytes of JSONL prompts, each with an extra
// field that must not be kept.
func writeJSONL(tb testing.TB, path string, size int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 16) // 432 bytes
	for n, i := 0, 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, "{\"id\": %d, \"prompt\": \"[%d] %s\", \"meta\": \"%s\"}\n", i, i, filler, filler[:64])
		n += k
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkSharedPool loads a 100 MB JSONL file and hands it to 1,000 VUs,
// reporting the heap above the baseline after each step: the handles must
// add next to nothing to one copy of the prompts.
func BenchmarkSharedPool(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	writeJSONL(b, path, 100<<20)
	st, _ := os.Stat(path)
	for b.Loop() {
		base := heapMB()
		p, err := loadJSONL(context.Background(), path, DefaultField)
		if err != nil {
			b.Fatal(err)
		}
		loaded := heapMB() - base
		handles := make([]handle, 1000)
		for i := range handles {
			handles[i] = handle{pool: p, cursor: i}
		}
		shared := heapMB() - base
		var promptBytes int
		for i := range p.Len() {
			promptBytes += len(p.Item(i).Text)
		}
		b.ReportMetric(float64(st.Size())/(1<<20), "file_MB")
		b.ReportMetric(float64(promptBytes)/(1<<20), "prompt_MB")
		b.ReportMetric(loaded, "heap_MB_loaded")
		b.ReportMetric(shared, "heap_MB_1000_VUs")
		runtime.KeepAlive(handles)
	}
}
