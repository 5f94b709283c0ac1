package run

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/gpu"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
)

// GPUNvidiaSMI is the --gpu sampler that runs nvidia-smi on this machine.
const GPUNvidiaSMI = "nvidia-smi"

// GPUOptions are the GPU telemetry a run reads besides the server's
// metrics, which may hold a DCGM exporter too (--metrics-url).
type GPUOptions struct {
	// Sampler is GPUNvidiaSMI to sample this machine's GPUs, "" for none.
	Sampler string
	// Binary is the nvidia-smi to run; "" finds it on PATH.
	Binary string
	// URLs are DCGM exporters (--gpu-metrics): anything else there is
	// explained in the result, and never stops the load.
	URLs []string
}

// asked lists the sources, credentials removed.
func (o GPUOptions) asked() []string {
	var out []string
	if o.Sampler != "" {
		out = append(out, o.Sampler)
	}
	for _, u := range o.URLs {
		out = append(out, redact.URL(u))
	}
	return out
}

// gpuRun is the GPU telemetry being read while the load runs.
type gpuRun struct {
	sampler *gpu.Sampler
	scraper *servermetrics.Scraper
}

// startGPU starts sampling nvidia-smi and scraping the --gpu-metrics
// exporters, on the server metrics' schedule, from start on.
func (c *Config) startGPU(start time.Time) *gpuRun {
	every := cmp.Or(c.Plan.Target.MetricsEvery, plan.DefaultMetricsEvery)
	g := &gpuRun{}
	if c.GPU.Sampler == GPUNvidiaSMI {
		g.sampler = gpu.Start(c.GPU.Binary, every, start)
	}
	var eps []servermetrics.Endpoint
	for _, u := range c.GPU.URLs {
		eps = append(eps, servermetrics.Endpoint{URL: u, GPUOnly: true})
	}
	g.scraper = servermetrics.StartAll(eps, every, start)
	return g
}

// addGPU stops the GPU telemetry and puts each stage's GPU and
// speculative-decoding figures into the result (see result.GPU); the
// section is left out when there is nothing to say.
func (c *Config) addGPU(res *result.Result, g *gpuRun) {
	sec := &result.GPU{Asked: c.GPU.asked(), NvidiaSMI: g.sampler.Stop()}
	if r := g.scraper.Stop(); r != nil {
		sec.Exporters = r.GPUs
	}
	if sm := res.ServerMetrics; sm != nil && sm.Scrapes == 0 && len(sm.Endpoints) == 0 && len(sm.GPUs) > 0 {
		// Only GPU exporters among --metrics-url: no server was scraped.
		sec.Exporters, res.ServerMetrics = append(sm.GPUs, sec.Exporters...), nil
	}
	if note := AddGPU(res, sec, c.Plan.SLO); note != "" {
		c.log("gpu: %s", note)
	}
}

// AddGPU fills sec's stages and note from its readings and the server
// metrics' over res's stages, puts it in res unless it has nothing to
// say, and draws res's Pareto front per GPU once the GPUs are known. It
// returns the note. A run calls it once its telemetry stopped, a merge
// with the segments' readings joined.
func AddGPU(res *result.Result, sec *result.GPU, slo plan.SLO) string {
	sources := servermetrics.GPUSources(res.ServerMetrics)
	for i := range sec.Exporters {
		sources = append(sources, servermetrics.GPUSources(&sec.Exporters[i])...)
	}
	sources = append(sources, servermetrics.GPUSources(sec.NvidiaSMI)...)
	sec.Stages = nil
	for _, st := range res.Stages {
		if s, ok := gpuStage(res, &st, sources); ok {
			sec.Stages = append(sec.Stages, s)
		}
	}
	sec.Note = gpuNote(sec, res.ServerMetrics)
	if len(sec.Asked) > 0 || len(sec.Stages) > 0 || len(sec.Exporters) > 0 {
		res.GPU = sec
	}
	gpus := 0
	for _, s := range sec.Stages {
		gpus = max(gpus, s.GPUs)
	}
	if gpus > 0 {
		// Now that the GPUs are known, the front is drawn per GPU too.
		res.Analysis.Pareto = analysis.Pareto(res.Stages, slo, gpus)
	}
	return sec.Note
}

// gpuStage is one stage's figures; ok is false when it has none.
func gpuStage(res *result.Result, st *metrics.StageSummary, sources []*servermetrics.Result) (s result.GPUStage, ok bool) {
	if st.Start.IsZero() || res.Run.Start.IsZero() {
		return s, false
	}
	from, to := st.Start.Sub(res.Run.Start).Seconds(), st.End.Sub(res.Run.Start).Seconds()
	s.Scenario, s.Stage = st.Scenario, st.Stage
	if g, has := servermetrics.StageGPU(sources, from, to); has {
		s.GPU, s.GPUs, ok = &g, len(g.Devices), true
		if g.EnergyJ != nil && st.OutputTokens > 0 {
			j := *g.EnergyJ / float64(st.OutputTokens)
			s.JoulesPerToken = &j
		}
		if st.OutputTokPerSec > 0 {
			v := st.OutputTokPerSec / float64(len(g.Devices))
			s.TokPerSecPerGPU = &v
		}
	}
	spec, hasSpec := servermetrics.StageSpec(res.ServerMetrics, from, to)
	if hasSpec {
		s.Spec, ok = &spec, true
	}
	if st.Chunks != nil && (hasSpec || st.Chunks.Mean > 1) {
		s.Chunks, ok = st.Chunks, true
	}
	if (hasSpec || s.Chunks != nil) && st.TPOT.Count > 0 {
		p50 := st.TPOT.P50
		s.TPOTP50MS = &p50
	}
	return s, ok
}

// gpuNote says why GPU figures that were asked for are missing: each
// source's own note (the exporters among sm's too), or that none of their
// readings fell within a stage.
func gpuNote(sec *result.GPU, sm *servermetrics.Result) string {
	var notes []string
	if r := sec.NvidiaSMI; r != nil && r.Note != "" {
		notes = append(notes, r.Note)
	}
	exporters := sec.Exporters
	if sm != nil {
		exporters = append(slices.Clone(sm.GPUs), exporters...)
	}
	for _, r := range exporters {
		if r.Note != "" {
			notes = append(notes, r.Note)
		}
	}
	hasGPU := false
	for _, s := range sec.Stages {
		hasGPU = hasGPU || s.GPU != nil
	}
	if len(notes) == 0 && len(sec.Asked) > 0 && !hasGPU {
		notes = append(notes, "no GPU reading from "+strings.Join(sec.Asked, ", ")+" fell within a stage")
	}
	return strings.Join(notes, "; ")
}
