package selfcheck

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// series makes one sample a second over span, each figure from f(i).
func series(start time.Time, span time.Duration, f func(i int, at time.Duration) Resources) []Resources {
	var out []Resources
	for i := 0; time.Duration(i)*time.Second <= span; i++ {
		at := time.Duration(i) * time.Second
		r := f(i, at)
		r.At = start.Add(at)
		out = append(out, r)
	}
	return out
}

func TestJudgeDrift(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	const mb = 1 << 20
	flat := func(i int, _ time.Duration) Resources {
		return Resources{RSS: 100 * mb, HeapLive: 40 * mb, Goroutines: 600, OpenFiles: 210}
	}
	tests := []struct {
		name    string
		span    time.Duration
		f       func(i int, at time.Duration) Resources
		nilWant bool
		growing map[string]bool // by figure
		pct     float64         // RSS change, ±1
	}{
		{name: "flat", span: 2 * time.Minute, f: flat, growing: map[string]bool{}},
		{name: "a garbage collector's sawtooth is not a trend", span: 2 * time.Minute, growing: map[string]bool{},
			f: func(i int, _ time.Duration) Resources {
				r := flat(i, 0)
				r.RSS += int64(i%7) * 10 * mb // up 60 MB and back, every 7 s
				r.HeapLive += int64(i%5) * 8 * mb
				return r
			}, pct: 0},
		{name: "RSS growing 1% a second", span: 5 * time.Minute, growing: map[string]bool{"RSS": true},
			f: func(i int, _ time.Duration) Resources {
				r := flat(i, 0)
				r.RSS += int64(i) * mb
				return r
			}, pct: 81},
		{name: "a goroutine leaked per second", span: 2 * time.Minute, growing: map[string]bool{"goroutines": true},
			f: func(i int, _ time.Duration) Resources {
				r := flat(i, 0)
				r.Goroutines += int64(i)
				return r
			}},
		{name: "files leak and the heap grows", span: 10 * time.Minute, growing: map[string]bool{"files": true, "heap": true},
			f: func(i int, _ time.Duration) Resources {
				r := flat(i, 0)
				r.OpenFiles += int64(i / 2)
				r.HeapLive += int64(i) * mb / 8
				return r
			}},
		{name: "a tiny load's growth stays under the noise floor", span: 2 * time.Minute, growing: map[string]bool{},
			f: func(i int, _ time.Duration) Resources {
				return Resources{RSS: 20 * mb * int64(10+i/60) / 10, HeapLive: 2 * mb, Goroutines: int64(5 + i/30), OpenFiles: int64(8 + i/30)}
			}},
		{name: "what the warm-up does is not judged", span: 2 * time.Minute, growing: map[string]bool{},
			f: func(i int, at time.Duration) Resources {
				r := flat(i, 0)
				if at < 20*time.Second { // connections opening, pools filling
					r.RSS, r.Goroutines, r.OpenFiles = 30*mb, 10, 10
				}
				return r
			}},
		{name: "shorter than a minute: not judged", span: 50 * time.Second, f: flat, nilWant: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := JudgeDrift(series(t0, tt.span, tt.f), t0, t0.Add(tt.span))
			if tt.nilWant {
				if d != nil {
					t.Fatalf("judged %+v, want nil", d)
				}
				return
			}
			if d == nil {
				t.Fatal("not judged")
			}
			got := map[string]bool{"RSS": d.RSS.Growing, "heap": d.HeapLive.Growing, "goroutines": d.Goroutines.Growing, "files": d.OpenFiles.Growing}
			for k, g := range got {
				if g != tt.growing[k] {
					t.Errorf("%s growing = %v, want %v (%+v)", k, g, tt.growing[k], d)
				}
			}
			if tt.pct != 0 && (d.RSS.Percent() < tt.pct-1 || d.RSS.Percent() > tt.pct+1) {
				t.Errorf("RSS change %.1f%%, want %.0f%%", d.RSS.Percent(), tt.pct)
			}
			if warm := d.From.Sub(t0); warm != max(10*time.Second, tt.span/5) {
				t.Errorf("warm-up %v, want the larger of 10s and a fifth of %v", warm, tt.span)
			}
		})
	}
}

// A figure the platform does not give is left out, not judged as zero.
func TestJudgeDriftUnmeasured(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	d := JudgeDrift(series(t0, 2*time.Minute, func(int, time.Duration) Resources {
		return Resources{RSS: -1, HeapLive: 1 << 30, Goroutines: 100, OpenFiles: -1}
	}), t0, t0.Add(2*time.Minute))
	if d == nil || d.RSS.Measured || d.OpenFiles.Measured || !d.HeapLive.Measured || !d.Goroutines.Measured {
		t.Fatalf("%+v: want RSS and open files unmeasured, the others measured", d)
	}
}

// The reader's figures are the process's own: a file opened is one more
// open file, a goroutine started one more goroutine.
func TestResourcesReadsTheProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	r := newResourceReader()
	runtime.GC() // the live heap is the last collection's figure
	before := r.now()
	if before.RSS <= 0 || before.HeapLive <= 0 || before.Goroutines <= 0 || before.OpenFiles <= 0 {
		t.Fatalf("%+v: want every figure measured", before)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	after := r.now()
	close(stop)
	<-done
	if after.OpenFiles != before.OpenFiles+1 {
		t.Errorf("open files %d after opening one, want %d", after.OpenFiles, before.OpenFiles+1)
	}
	if after.Goroutines < before.Goroutines+1 {
		t.Errorf("goroutines %d after starting one, want at least %d", after.Goroutines, before.Goroutines+1)
	}
}

// The monitor keeps what the process held at each sample.
func TestMonitorKeepsResources(t *testing.T) {
	n := 0
	src := readers{
		process:   func() (time.Duration, bool) { return 0, true },
		machine:   func() (machineStat, bool) { return machineStat{}, false },
		resources: func() Resources { n++; return Resources{At: time.Now(), Goroutines: int64(n)} },
	}
	m := start(time.Hour, src)
	m.take()
	m.take()
	m.Stop()
	got := m.Resources()
	if len(got) != 3 || got[0].Goroutines != 1 || got[2].Goroutines != 3 {
		t.Errorf("resources %+v, want three samples in order", got)
	}
}
