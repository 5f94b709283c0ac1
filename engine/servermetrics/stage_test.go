package servermetrics

import (
	"math"
	"testing"
)

func near(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// TestStageParts reads vLLM's prefill and decode histograms over a
// window: their p50 and p99 from the interval's bucket increases, worked
// out by hand (prefill: 40 requests, 20 ≤ 50 ms, 20 in (50, 100] ms, so p99 = 50 + 50 × 19.6 ÷ 20;
// decode: 40 in (1, 2.5] s).
func TestStageParts(t *testing.T) {
	r := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	p, ok := StageParts(r, 0, 20)
	if !ok || p.Prefill == nil || p.Decode == nil || p.Queue != nil {
		t.Fatalf("parts %+v ok %v", p, ok)
	}
	for _, c := range []struct {
		name     string
		part     *Part
		p50, p99 float64
		metric   string
	}{
		{"prefill", p.Prefill, 50, 99, "vllm:request_prefill_time_seconds"},
		{"decode", p.Decode, 1750, 2485, "vllm:request_decode_time_seconds"},
	} {
		if !near(c.part.P50MS, c.p50) || !near(c.part.P99MS, c.p99) || c.part.Metric != c.metric {
			t.Errorf("%s: p50 %v p99 %v metric %q, want %v %v %q", c.name, *c.part.P50MS, *c.part.P99MS, c.part.Metric, c.p50, c.p99, c.metric)
		}
	}
	if _, ok := StageParts(r, 10, 20); ok {
		t.Error("a window with no interval's end in it has parts")
	}
	if _, ok := StageParts(nil, 0, 20); ok {
		t.Error("a nil result has parts")
	}
}

// TestStagePartsEndpoints takes the mean p50 and worst p99 of replicas.
func TestStagePartsEndpoints(t *testing.T) {
	a := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	b := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	b.Lookup("vllm:request_prefill_time_seconds:p99").V[0] = 300
	b.Lookup("vllm:request_prefill_time_seconds:p50").V[0] = 70
	r := &Result{Endpoints: []Result{*a, *b}}
	p, _ := StageParts(r, 0, 20)
	if !near(p.Prefill.P50MS, 60) || !near(p.Prefill.P99MS, 300) || p.Prefill.Endpoints != 2 {
		t.Errorf("prefill over replicas %+v", p.Prefill)
	}
}

// TestStageSpec reads vLLM's spec-decode counters over a window by its
// own definitions: acceptance 2130 ÷ 3000 tokens, length 1 + 2130 ÷ 1000
// drafts; SGLang's gauges averaged.
func TestStageSpec(t *testing.T) {
	r := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	s, ok := StageSpec(r, 0, 20)
	if !ok || !near(s.AcceptRate, 0.71) || !near(s.AcceptLength, 3.13) || s.Drafts != 1000 || s.DraftTokens != 3000 || s.Accepted != 2130 {
		t.Fatalf("spec %+v ok %v", s, ok)
	}
	if len(s.Metrics) != 4 {
		t.Errorf("metrics %v", s.Metrics)
	}
	// Per position: (1850−1000, 1570−850, 1210−650) ÷ 1000 drafts.
	if want := []float64{0.85, 0.72, 0.56}; len(s.PerPosition) != 3 || math.Abs(s.PerPosition[0]-want[0]) > 1e-9 ||
		math.Abs(s.PerPosition[1]-want[1]) > 1e-9 || math.Abs(s.PerPosition[2]-want[2]) > 1e-9 {
		t.Errorf("per position %v, want %v", s.PerPosition, want)
	}
	sg := build(t,
		"sglang:spec_accept_rate{tp_rank=\"0\"} 0.5\nsglang:spec_accept_length{tp_rank=\"0\"} 2.5\n",
		"sglang:spec_accept_rate{tp_rank=\"0\"} 0.7\nsglang:spec_accept_length{tp_rank=\"0\"} 3.5\n")
	s, ok = StageSpec(sg, -1, 20)
	if !ok || !near(s.AcceptRate, 0.6) || !near(s.AcceptLength, 3) {
		t.Errorf("sglang %+v", s)
	}
	none := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	if s, ok := StageSpec(none, 0, 20); ok {
		t.Errorf("no spec metrics: %+v", s)
	}
}

// TestStageSpecEndpoints sums the counters of the replicas that have
// them, one replica without speculation besides.
func TestStageSpecEndpoints(t *testing.T) {
	a := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	b := build(t, "testdata/vllm_spec_1.txt", "testdata/vllm_spec_2.txt")
	plain := build(t, "testdata/vllm_1.txt", "testdata/vllm_2.txt")
	s, ok := StageSpec(&Result{Endpoints: []Result{*a, *b, *plain}}, 0, 20)
	if !ok || s.Drafts != 2000 || s.DraftTokens != 6000 || s.Accepted != 4260 || !near(s.AcceptRate, 0.71) || len(s.Metrics) != 4 ||
		len(s.PerPosition) != 3 || math.Abs(s.PerPosition[0]-0.85) > 1e-9 {
		t.Errorf("spec over replicas %+v", s)
	}
}
