package main

import (
	"slices"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/redact"
	enginerun "github.com/llmload/llmload/engine/run"
)

// gpuFlags are run's GPU telemetry flags.
type gpuFlags struct {
	sampler string
	urls    []string
}

func (g *gpuFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.sampler, "gpu", "", "sample this machine's GPUs during the run, for a target served beside llmload: nvidia-smi\n"+
		"(utilisation, power, memory per GPU; a stage's energy per output token from the power)")
	fs.StringArrayVar(&g.urls, "gpu-metrics", nil, "NVIDIA's DCGM exporter (its /metrics), read during the run for GPU utilisation, power,\n"+
		"memory and energy per stage; repeat it for each node. Anything else there is noted, never fatal")
}

// check rejects a --gpu sampler llmload does not have and a --gpu-metrics
// URL that could never be scraped, or is given twice.
func (g *gpuFlags) check() error {
	if g.sampler != "" && g.sampler != enginerun.GPUNvidiaSMI {
		return usagef("run: --gpu %q: the one sampler is %s", g.sampler, enginerun.GPUNvidiaSMI)
	}
	for i, u := range g.urls {
		if err := checkMetricsURL(u); err != nil || u == "" {
			return usagef("run: --gpu-metrics %q is not an http(s) URL", redact.URL(u))
		}
		if slices.Contains(g.urls[:i], u) {
			return usagef("run: --gpu-metrics %s is given twice", redact.URL(u))
		}
	}
	return nil
}

// options are the flags as the run reads them.
func (g *gpuFlags) options() enginerun.GPUOptions {
	return enginerun.GPUOptions{Sampler: g.sampler, URLs: slices.Clone(g.urls)}
}
