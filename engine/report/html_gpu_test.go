package report

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/result"
)

// TestHTMLGPU renders the GPU and speculative-decoding section as tables.
func TestHTMLGPU(t *testing.T) {
	golden(t, "gpu.html.golden", []byte(gpuHTML(gpuFixture())))
}

// TestHTMLGPUAbsent has no section without one, and the reason when GPU
// figures were asked for and none came; the page holds the section.
func TestHTMLGPUAbsent(t *testing.T) {
	if got := gpuHTML(&result.Result{}); got != "" {
		t.Errorf("no section: %q", got)
	}
	r := &result.Result{GPU: &result.GPU{Asked: []string{"http://gpu:9400/metrics"},
		Note: "--gpu-metrics http://gpu:9400/metrics is not NVIDIA's DCGM exporter: <html>"}}
	got := string(gpuHTML(r))
	if !strings.Contains(got, "is not NVIDIA&#39;s DCGM exporter: &lt;html&gt;") || !strings.Contains(got, "No GPU figures from") {
		t.Errorf("absent section %q", got)
	}
	page := render(t, HTML(gpuFixture()))
	for _, want := range []string{"<h2>GPUs</h2>", "Speculative decoding", `data-chart="gpu-1"`, "GPU power"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page has no %q", want)
		}
	}
}
