package gpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/servermetrics"
)

// fake writes an nvidia-smi that prints a testdata file and exits with
// code, checking it was asked Query's fields.
func fake(t *testing.T, output string, code int) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", output))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "nvidia-smi")
	script := "#!/bin/sh\n[ \"$1\" = \"--query-gpu=" + Query + "\" ] || { echo \"bad args: $*\"; exit 2; }\n" +
		"cat '" + abs + "'\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// sampleFor runs a sampler over bin for a little more than two intervals.
func sampleFor(t *testing.T, bin string) *servermetrics.Result {
	t.Helper()
	s := Start(bin, servermetrics.MinEvery, time.Now())
	time.Sleep(250 * time.Millisecond)
	return s.Stop()
}

func byRole(r *servermetrics.Result, role servermetrics.Role, index string) *servermetrics.Series {
	for i := range r.Series {
		if s := &r.Series[i]; s.Role == role && s.GPU.Index == index {
			return s
		}
	}
	return nil
}

// TestSamplerReadings reads each GPU's fields into the DCGM roles, the
// free memory from the total.
func TestSamplerReadings(t *testing.T) {
	r := sampleFor(t, fake(t, "two_v100.txt", 0))
	if r.Server != servermetrics.ServerNvidiaSMI || r.Failures != 0 || r.Note != "" || r.Scrapes < 1 {
		t.Fatalf("result %+v", r)
	}
	for _, c := range []struct {
		role  servermetrics.Role
		index string
		want  float64
	}{
		{servermetrics.RoleGPUUtil, "0", 87},
		{servermetrics.RoleGPUPower, "0", 251.3},
		{servermetrics.RoleGPUMemUsed, "1", 1024},
		{servermetrics.RoleGPUMemFree, "0", 2256},
	} {
		s := byRole(r, c.role, c.index)
		if s == nil || len(s.V) != r.Scrapes || s.V[0] != c.want {
			t.Errorf("%s of GPU %s: %+v, want %v in each of %d samples", c.role, c.index, s, c.want, r.Scrapes)
			continue
		}
		if s.GPU.Model != "Tesla V100-SXM2-32GB" || !strings.HasPrefix(s.GPU.UUID, "GPU-") {
			t.Errorf("device %+v", s.GPU)
		}
	}
}

// TestSamplerBadOutput counts what is no reading, in words, and never
// reads it as zero.
func TestSamplerBadOutput(t *testing.T) {
	for _, c := range []struct {
		name, bin string
		series    int
		note      string
	}{
		{"N/A", fake(t, "na_power.txt", 0), 1, "power.draw [N/A] on GPU 0"},
		{"no driver", fake(t, "no_driver.txt", 9), 0, "nvidia-smi exited with status 9: NVIDIA-SMI has failed"},
		{"garbage", fake(t, "garbage.txt", 0), 0, "unreadable line from nvidia-smi"},
		{"absent", filepath.Join(t.TempDir(), "nvidia-smi"), 0, "cannot be run: no such file or directory"},
	} {
		r := sampleFor(t, c.bin)
		if len(r.Series) != c.series {
			t.Errorf("%s: %d series, want %d", c.name, len(r.Series), c.series)
		}
		for _, s := range r.Series {
			for _, v := range s.V {
				if v == 0 {
					t.Errorf("%s: a zero in %s", c.name, s.Name)
				}
			}
		}
		if !strings.Contains(strings.Join(r.Errors, "; "), c.note) {
			t.Errorf("%s: errors %q, want %q", c.name, r.Errors, c.note)
		}
		if c.series == 0 && !strings.Contains(r.Note, c.note) {
			t.Errorf("%s: note %q", c.name, r.Note)
		}
	}
}

// TestSamplerNotOnPath finds no nvidia-smi on PATH and says so once.
func TestSamplerNotOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := sampleFor(t, "")
	if r.Scrapes != 1 || len(r.Series) != 0 || !strings.Contains(r.Note, "nvidia-smi cannot be run: executable file not found") {
		t.Errorf("scrapes %d note %q", r.Scrapes, r.Note)
	}
}

// TestStopTwice returns the same result, and a nil sampler none.
func TestStopTwice(t *testing.T) {
	s := Start(fake(t, "two_v100.txt", 0), time.Second, time.Now())
	if a, b := s.Stop(), s.Stop(); a != b {
		t.Error("two results")
	}
	var none *Sampler
	if none.Stop() != nil {
		t.Error("nil sampler has a result")
	}
}

// TestStopHungSampler stops a sampler whose nvidia-smi hangs at once,
// without counting the cut sample.
func TestStopHungSampler(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "nvidia-smi")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Start(bin, time.Second, time.Now())
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	r := s.Stop()
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("Stop took %v", d)
	}
	if r.Scrapes != 0 || r.Failures != 0 || len(r.Errors) != 0 {
		t.Errorf("a cut sample was counted: %+v", r)
	}
}

// TestRowName reads a device name with a comma in it.
func TestRowName(t *testing.T) {
	s := &Sampler{at: map[string]int{}}
	if !s.row(1, "3, GPU-c0ffee, NVIDIA RTX 6000 Ada Generation, rev 2, 10, 55.5, 100, 49140") {
		t.Fatalf("not read: %v", s.notes.lines())
	}
	if got := s.res.Series[0].GPU.Model; got != "NVIDIA RTX 6000 Ada Generation, rev 2" {
		t.Errorf("name %q", got)
	}
	if s.row(1, "3, GPU-c0ffee, 10, 55.5") {
		t.Error("a truncated line was read")
	}
}
