package run

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/servermetrics"
)

// dcgmServer serves a real DCGM exporter's first scrape, then its second
// (the energy counter 756.02 J further) from then on.
func dcgmServer(t *testing.T) *httptest.Server {
	t.Helper()
	var bodies [2][]byte
	for i, f := range []string{"dcgm_2.0.13_1.txt", "dcgm_2.0.13_2.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		bodies[i] = b
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", promText)
		w.Write(bodies[min(n.Add(1)-1, 1)])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeSMI is an nvidia-smi that prints one GPU's reading.
func fakeSMI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nvidia-smi")
	script := "#!/bin/sh\necho '0, GPU-b8d1, NVIDIA L40S, 60, 200.00, 1000, 46068'\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A run reads a --gpu-metrics DCGM exporter and nvidia-smi while the load
// runs, and its stage has both GPUs, the energy, J per output token and
// tokens/s per GPU.
func TestRunReadsGPUs(t *testing.T) {
	dcgm := dcgmServer(t)
	p := testPlan(800 * time.Millisecond)
	p.Target.MetricsEvery = servermetrics.MinEvery
	cfg := testConfig(t, p, &fakeRunner{})
	cfg.GPU = GPUOptions{Sampler: GPUNvidiaSMI, Binary: fakeSMI(t), URLs: []string{dcgm.URL + "/metrics"}}
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	res := readBack(t, cfg.Outputs.Out)
	sec := res.GPU
	if sec == nil || len(sec.Stages) != 1 || sec.Note != "" || len(sec.Exporters) != 1 || sec.NvidiaSMI == nil {
		t.Fatalf("gpu section %+v", sec)
	}
	st := sec.Stages[0]
	if st.GPUs != 2 || st.GPU == nil || st.GPU.PowerW == nil || st.GPU.EnergyJ == nil || st.TokPerSecPerGPU == nil {
		t.Fatalf("stage %+v gpu %+v", st, st.GPU)
	}
	if got := st.GPU.Devices[1]; got.Model != "NVIDIA L40S" || got.EnergySource != servermetrics.EnergyPowerIntegral || *got.PowerMeanW != 200 {
		t.Errorf("nvidia-smi device %+v", got)
	}
	if got := st.GPU.Devices[0]; got.UUID != "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba" || got.EnergySource != servermetrics.EnergyCounter {
		t.Errorf("DCGM device %+v", got)
	}
	stage := res.Stages[0]
	if stage.OutputTokens == 0 || st.JoulesPerToken == nil || *st.JoulesPerToken != *st.GPU.EnergyJ/float64(stage.OutputTokens) {
		t.Errorf("J/token %v over %d tokens", st.JoulesPerToken, stage.OutputTokens)
	}
	if want := stage.OutputTokPerSec / 2; *st.TokPerSecPerGPU != want {
		t.Errorf("tok/s per GPU %v, want %v", *st.TokPerSecPerGPU, want)
	}
	if st.Spec != nil || st.Chunks != nil {
		t.Errorf("one token per chunk and no spec metrics, yet spec %+v chunks %+v", st.Spec, st.Chunks)
	}
}

// GPU sources that give nothing — no nvidia-smi, a web page at
// --gpu-metrics — are said in the result's note; the load runs to its end
// and no GPU figure is written.
func TestRunGPUAskedButAbsent(t *testing.T) {
	html, _ := metricsServer(t, "text/html", "<html><body>Grafana</body></html>")
	p := testPlan(300 * time.Millisecond)
	p.Target.MetricsEvery = servermetrics.MinEvery
	cfg := testConfig(t, p, &fakeRunner{})
	cfg.GPU = GPUOptions{Sampler: GPUNvidiaSMI, Binary: filepath.Join(t.TempDir(), "nvidia-smi"), URLs: []string{html.URL + "/metrics"}}
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	res := readBack(t, cfg.Outputs.Out)
	if res.Stages[0].Requests == 0 {
		t.Fatal("no load was sent")
	}
	sec := res.GPU
	if sec == nil || len(sec.Stages) != 0 || len(sec.Asked) != 2 {
		t.Fatalf("gpu section %+v", sec)
	}
	for _, want := range []string{"nvidia-smi cannot be run", "--gpu-metrics " + html.URL + "/metrics answered no metrics"} {
		if !strings.Contains(sec.Note, want) {
			t.Errorf("note %q, want %q", sec.Note, want)
		}
	}
}

// A run that asked for no GPU and whose server has none writes no GPU
// section.
func TestRunNoGPU(t *testing.T) {
	cfg := testConfig(t, testPlan(200*time.Millisecond), &fakeRunner{})
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	if sec := readBack(t, cfg.Outputs.Out).GPU; sec != nil {
		t.Errorf("gpu section %+v", sec)
	}
}

// A DCGM exporter named by --metrics-url is read as GPUs, not as a server
// of unknown names: the result has no server metrics, and the stage its
// GPU.
func TestRunDCGMAsMetricsURL(t *testing.T) {
	dcgm := dcgmServer(t)
	p := testPlan(500 * time.Millisecond)
	p.Target.MetricsURL, p.Target.MetricsEvery = dcgm.URL+"/metrics", servermetrics.MinEvery
	cfg := testConfig(t, p, &fakeRunner{})
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	res := readBack(t, cfg.Outputs.Out)
	if res.ServerMetrics != nil {
		t.Errorf("server metrics %+v", res.ServerMetrics)
	}
	sec := res.GPU
	if sec == nil || len(sec.Exporters) != 1 || len(sec.Stages) != 1 || sec.Stages[0].GPUs != 1 || sec.Note != "" {
		t.Fatalf("gpu section %+v", sec)
	}
	if d := sec.Stages[0].GPU.Devices[0]; d.Source != dcgm.URL+"/metrics" || d.EnergySource != servermetrics.EnergyCounter {
		t.Errorf("device %+v", d)
	}
}
