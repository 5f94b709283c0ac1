package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
)

func fp(v float64) *float64 { return &v }

// gpuFixture is a sweep of two stages on two GPUs, one read from a DCGM
// exporter (energy from its counter), one from nvidia-smi (energy from
// its power), with vLLM's speculative decoding in the second stage.
func gpuFixture() *result.Result {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	stages := []metrics.StageSummary{
		{Scenario: "sweep", Stage: "c4", Start: start, End: start.Add(time.Minute), OutputTokens: 60000, OutputTokPerSec: 1000},
		{Scenario: "sweep", Stage: "c16", Start: start.Add(time.Minute), End: start.Add(2 * time.Minute), OutputTokens: 180000, OutputTokPerSec: 3000},
	}
	dev := func(idx, uuid, model, host, src, energySrc string, util, power, mem, energy float64) servermetrics.GPUDevice {
		d := servermetrics.GPUDevice{GPU: servermetrics.GPU{Index: idx, UUID: uuid, Model: model, Host: host}, Source: src,
			PowerMeanW: fp(power), MemUsedMaxMiB: fp(mem), EnergyJ: fp(energy), EnergySource: energySrc}
		if util >= 0 {
			d.UtilMeanPct = fp(util)
		}
		return d
	}
	stage := func(st metrics.StageSummary, devs ...servermetrics.GPUDevice) result.GPUStage {
		g := &servermetrics.GPUStage{Devices: devs, PowerW: fp(0), MemUsedMaxMiB: fp(0), EnergyJ: fp(0),
			EnergySource: servermetrics.EnergyCounter + " and " + servermetrics.EnergyPowerIntegral}
		for _, d := range devs {
			*g.PowerW += *d.PowerMeanW
			*g.MemUsedMaxMiB += *d.MemUsedMaxMiB
			*g.EnergyJ += *d.EnergyJ
		}
		return result.GPUStage{Scenario: st.Scenario, Stage: st.Stage, GPU: g, GPUs: len(devs),
			JoulesPerToken: fp(*g.EnergyJ / float64(st.OutputTokens)), TokPerSecPerGPU: fp(st.OutputTokPerSec / float64(len(devs)))}
	}
	const dcgm = "http://gpu-node:9400/metrics"
	s1 := stage(stages[0],
		dev("0", "GPU-a6158b59-2c1e-1e63-0068-9178c4298abd", "Tesla V100-SXM2-32GB", "r6i3n0", dcgm, servermetrics.EnergyCounter, 41, 120.5, 30512, 7230),
		dev("0", "GPU-b8d1", "NVIDIA L40S", "", "nvidia-smi", servermetrics.EnergyPowerIntegral, -1, 98, 20000, 5880))
	s2 := stage(stages[1],
		dev("0", "GPU-a6158b59-2c1e-1e63-0068-9178c4298abd", "Tesla V100-SXM2-32GB", "r6i3n0", dcgm, servermetrics.EnergyCounter, 93, 281.2, 31800, 16872),
		dev("0", "GPU-b8d1", "NVIDIA L40S", "", "nvidia-smi", servermetrics.EnergyPowerIntegral, -1, 240, 21000, 14400))
	s2.Spec = &servermetrics.Spec{Server: servermetrics.ServerVLLM, AcceptRate: fp(0.71), AcceptLength: fp(3.13),
		Drafts: 1000, DraftTokens: 3000, Accepted: 2130, PerPosition: []float64{0.85, 0.72, 0.56}, Metrics: []string{"vllm:spec_decode_num_drafts_total:increase"}}
	s2.Chunks = &metrics.Chunks{Requests: 412, Mean: 2.6, P50: 2.5, P99: 4}
	s2.TPOTP50MS = fp(4.1)
	smi := &servermetrics.Result{URL: "nvidia-smi", Server: servermetrics.ServerNvidiaSMI, Series: []servermetrics.Series{
		{Name: "nvidia-smi:gpu_power", Role: servermetrics.RoleGPUPower, Unit: servermetrics.UnitWatts,
			T: []float64{5, 35, 65, 95}, V: []float64{90, 106, 230, 250}, GPU: &servermetrics.GPU{Index: "0", UUID: "GPU-b8d1", Model: "NVIDIA L40S"}},
	}}
	return &result.Result{Run: result.Meta{Start: start}, Stages: stages,
		GPU: &result.GPU{Asked: []string{"nvidia-smi", dcgm}, NvidiaSMI: smi, Stages: []result.GPUStage{s1, s2}}}
}

// TestTextGPU renders the GPU and speculative-decoding section.
func TestTextGPU(t *testing.T) {
	var b bytes.Buffer
	writeGPU(&b, gpuFixture())
	golden(t, "gpu.txt.golden", trimLines(b.Bytes()))
}

// TestTextGPUAbsent says why asked-for GPU figures are missing, and says
// nothing when none was asked for.
func TestTextGPUAbsent(t *testing.T) {
	for _, c := range []struct {
		name string
		sec  *result.GPU
		want string
	}{
		{"none asked", nil, ""},
		{"asked", &result.GPU{Asked: []string{"nvidia-smi"}, Note: "--gpu nvidia-smi gave no GPU readings in 12 samples: nvidia-smi cannot be run: executable file not found in $PATH (1×)"},
			"GPU (nvidia-smi): no figures\n  --gpu nvidia-smi gave no GPU readings"},
	} {
		var b bytes.Buffer
		writeGPU(&b, &result.Result{GPU: c.sec})
		if got := b.String(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if strings.Contains(b.String(), " 0 ") {
			t.Errorf("%s: a zero figure in %q", c.name, b.String())
		}
	}
}
