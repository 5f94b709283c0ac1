package servermetrics

import (
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// gpuSeries are a build's GPU series by role and device key.
func gpuSeries(r *Result) map[string]*Series {
	out := map[string]*Series{}
	for _, s := range r.GPUSeries() {
		out[string(s.Role)+" "+s.GPU.Key()] = s
	}
	return out
}

// TestGPUFromDCGM reads two scrapes of a real DCGM exporter, 10 s apart:
// each field one series of the device, the energy counter's increase in
// J, and the endpoint known as a DCGM exporter with no queue to explain.
func TestGPUFromDCGM(t *testing.T) {
	b := newBuilder()
	for i, f := range []string{"testdata/dcgm_2.0.13_1.txt", "testdata/dcgm_2.0.13_2.txt"} {
		b.add(float64(10*i), i, parse(t, f))
	}
	r := &Result{URL: "http://gpu:9400/metrics", Scrapes: 2, Series: b.series()}
	b.describe(r)
	if r.Server != ServerDCGM || r.Note != "" {
		t.Errorf("server %q note %q, want dcgm and none", r.Server, r.Note)
	}
	const dev = "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba"
	got := gpuSeries(r)
	for _, c := range []struct {
		role   Role
		unit   string
		wantV  []float64
		wantT0 float64
	}{
		{RoleGPUUtil, UnitPercent, []float64{0, 87}, 0},
		{RoleGPUPower, UnitWatts, []float64{23.528, 151.204}, 0},
		{RoleGPUMemUsed, UnitMiB, []float64{1057, 6945}, 0},
		{RoleGPUMemFree, UnitMiB, []float64{7064, 1176}, 0},
		{RoleGPUEnergy, UnitJoules, []float64{756.02}, 10},
	} {
		s := got[string(c.role)+" "+dev]
		if s == nil {
			t.Errorf("%s: no series; have %v", c.role, names(r))
			continue
		}
		if s.Unit != c.unit || s.GPU.Index != "0" || len(s.V) != len(c.wantV) || s.T[0] != c.wantT0 {
			t.Errorf("%s: unit %q gpu %+v T %v V %v", c.role, s.Unit, s.GPU, s.T, s.V)
			continue
		}
		for i, v := range c.wantV {
			if math.Abs(s.V[i]-v) > 1e-9 {
				t.Errorf("%s[%d] = %v, want %v", c.role, i, s.V[i], v)
			}
		}
	}
}

// TestGPULabels reads the device labels: modelName, either spelling of
// the host, and a pod's; a MIG GPU's instances are its first row.
func TestGPULabels(t *testing.T) {
	r := build(t, "testdata/dcgm_a30_mig.txt")
	got := gpuSeries(r)
	s := got["gpu_power GPU-265c9814-6156-355b-e589-ff2064894f16"]
	if len(r.GPUSeries()) != 2 || s == nil || len(s.V) != 1 || s.V[0] != 52.636 {
		t.Fatalf("MIG: %d series, %+v", len(r.GPUSeries()), s)
	}
	if s.GPU.Model != "NVIDIA A30" || s.GPU.Host != "yg-data-k8s-gpu-a30-node-test-test0003.mt" {
		t.Errorf("labels %+v", s.GPU)
	}
	r = build(t, "testdata/dcgm_k8s_pod.txt")
	got = gpuSeries(r)
	pod := got["gpu_mem_free GPU-63bc0b91-2265-1b94-831c-15c41fe92675"]
	if pod == nil || pod.GPU.Pod != "triton-server-f7cb5d77-95xcf" || pod.GPU.Namespace != "default" ||
		pod.GPU.Container != "triton-server" || pod.GPU.Host != "dcgm-exporter-wwwjh" || pod.V[0] != 2207 {
		t.Errorf("pod's GPU: %+v", pod)
	}
}

// TestGPUBadValues drops what is no reading: DCGM's blank sentinels,
// NaN, negatives; a counter that went down gives no increase.
func TestGPUBadValues(t *testing.T) {
	cases := map[string][]string{
		"blank int64":  {`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 9223372036854775794`},
		"blank fp64":   {`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} 140737488355328`},
		"NaN":          {`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a"} NaN`},
		"negative":     {`DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} -1`},
		"counter down": {`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a"} 5000`, `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a"} 10`},
	}
	for name, scrapes := range cases {
		for i := range scrapes {
			scrapes[i] += "\n"
		}
		if r := build(t, scrapes...); len(r.GPUSeries()) != 0 {
			t.Errorf("%s: %+v", name, r.GPUSeries()[0])
		}
	}
}

// TestGPUOnlyNotes explains an endpoint named by --gpu-metrics that is no
// DCGM exporter: an HTML page, another server's metrics, nothing.
func TestGPUOnlyNotes(t *testing.T) {
	html := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>Grafana</body></html>"))
	}))
	vllm := serve(t, &exposition{bodies: []string{fixture(t, "vllm_1.txt")}})
	dcgm := serve(t, &exposition{bodies: []string{fixture(t, "dcgm_2.0.13_1.txt")}})
	for _, c := range []struct {
		url, want string
	}{
		{html.URL, "answered no metrics in 1 scrape: an HTML page, not the Prometheus text format; no GPU"},
		{vllm.URL, "is not NVIDIA's DCGM exporter: none of its"},
		{dcgm.URL, ""},
	} {
		s := StartAll([]Endpoint{{URL: c.url, GPUOnly: true}}, MinEvery, time.Now())
		r := s.Stop()
		if len(r.GPUs) != 1 {
			t.Fatalf("%s: GPUs %d", c.url, len(r.GPUs))
		}
		note := r.GPUs[0].Note
		if (c.want == "") != (note == "") || !strings.Contains(note, c.want) || (note != "" && !strings.Contains(note, c.url)) {
			t.Errorf("%s: note %q, want %q", c.url, note, c.want)
		}
	}
}

// TestDCGMBesideServer scrapes a vLLM and a DCGM exporter together: the
// server's Result is vLLM's as if alone, the exporter's in GPUs.
func TestDCGMBesideServer(t *testing.T) {
	vllm := serve(t, &exposition{bodies: []string{fixture(t, "vllm_1.txt")}})
	dcgm := serve(t, &exposition{bodies: []string{fixture(t, "dcgm_2.0.13_1.txt")}})
	s := StartAll([]Endpoint{{URL: vllm.URL}, {URL: dcgm.URL}}, MinEvery, time.Now())
	r := s.Stop()
	if r.URL != vllm.URL || r.Server != ServerVLLM || len(r.Endpoints) != 0 || len(r.GPUs) != 1 {
		t.Fatalf("url %q server %q endpoints %d gpus %d", r.URL, r.Server, len(r.Endpoints), len(r.GPUs))
	}
	if g := r.GPUs[0]; g.Server != ServerDCGM || g.Note != "" || len(r.GPUSeries()) == 0 {
		t.Errorf("gpu result: server %q note %q series %d", g.Server, g.Note, len(r.GPUSeries()))
	}
}

// BenchmarkDCGMScrape is one scrape of a real DCGM exporter's exposition
// turned into the GPU series, parsing included.
func BenchmarkDCGMScrape(b *testing.B) {
	raw, err := os.ReadFile("testdata/dcgm_2.0.13_1.txt")
	if err != nil {
		b.Fatal(err)
	}
	body := string(raw)
	bld := newBuilder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		fams, err := decode(strings.NewReader(body), http.Header{})
		if err != nil {
			b.Fatal(err)
		}
		bld.add(float64(i), i, fams)
		i++
	}
}
