package result

import (
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/servermetrics"
)

// GPU is what the GPUs serving the run did in each stage — utilisation,
// power, memory, energy, and the energy per output token — and the
// speculative decoding the server did, seen from both sides. A figure
// that was not measured is absent, never zero; when GPU figures were
// asked for (--gpu, --gpu-metrics) and none came, Note says why.
type GPU struct {
	// Asked are the GPU sources the user named: "nvidia-smi", and each
	// --gpu-metrics URL without credentials.
	Asked []string `json:"asked,omitempty"`
	// Note says why there are no GPU figures, or which source gave none.
	Note string `json:"note,omitempty"`
	// NvidiaSMI is what --gpu nvidia-smi sampled; nil without it.
	NvidiaSMI *servermetrics.Result `json:"nvidia_smi,omitempty"`
	// Exporters are the DCGM exporters named by --gpu-metrics, each one's
	// scrapes and series; those among --metrics-url are in
	// ServerMetrics.GPUs.
	Exporters []servermetrics.Result `json:"exporters,omitempty"`
	// Stages has one entry per stage with a GPU or speculative-decoding
	// figure, in the result's stage order.
	Stages []GPUStage `json:"stages,omitempty"`
}

// GPUStage is one stage's GPU and speculative-decoding figures.
type GPUStage struct {
	Scenario string `json:"scenario"`
	Stage    string `json:"stage"`
	// GPU is every GPU over the stage and their totals; nil without a
	// GPU source.
	GPU *servermetrics.GPUStage `json:"gpu,omitempty"`
	// GPUs is how many GPUs were seen in the stage.
	GPUs int `json:"gpus,omitempty"`
	// JoulesPerToken is the stage's energy (GPU.EnergyJ, of every GPU)
	// over its output tokens; absent without both.
	JoulesPerToken *float64 `json:"joules_per_token,omitempty"`
	// TokPerSecPerGPU is the stage's output tokens per second over the
	// GPUs seen.
	TokPerSecPerGPU *float64 `json:"tok_per_sec_per_gpu,omitempty"`
	// Spec is the server's speculative decoding over the stage; nil when
	// it exposes none.
	Spec *servermetrics.Spec `json:"spec,omitempty"`
	// Chunks is the client's tokens per streamed chunk (the stage's own
	// metrics.StageSummary.Chunks), kept here beside the server's
	// acceptance when either says speculation happened.
	Chunks *metrics.Chunks `json:"chunks,omitempty"`
	// TPOTP50MS is the stage's client TPOT p50, the figure speculation
	// is meant to lower.
	TPOTP50MS *float64 `json:"tpot_p50_ms,omitempty"`
}
