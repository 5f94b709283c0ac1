package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/gpu"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeGPU shows the GPUs per stage, summed and per device, with the
// energy per output token, then the speculative decoding seen from both
// sides; when GPU figures were asked for and none came, why. Nothing for
// a result without the section.
func writeGPU(b *bytes.Buffer, r *result.Result) {
	sec := r.GPU
	if sec == nil {
		return
	}
	labels := gpuLabels(r)
	if hasGPUStage(sec) {
		writeGPUTable(b, sec, labels)
	} else if len(sec.Asked) > 0 {
		fmt.Fprintf(b, "\nGPU (%s): no figures\n", strings.Join(sec.Asked, ", "))
	}
	if sec.Note != "" {
		b.WriteString(wrap(sec.Note, "  ", "    ", maxWidth))
	}
	writeSpec(b, sec, labels)
}

// gpuLabels names each GPU stage as the stage tables do.
func gpuLabels(r *result.Result) map[[2]string]string {
	labels := stageLabels(r.Stages)
	out := make(map[[2]string]string, len(labels))
	for i, st := range r.Stages {
		out[[2]string{st.Scenario, st.Stage}] = labels[i]
	}
	return out
}

func label(labels map[[2]string]string, s result.GPUStage) string {
	if l, ok := labels[[2]string{s.Scenario, s.Stage}]; ok {
		return l
	}
	return s.Stage
}

func hasGPUStage(sec *result.GPU) bool {
	for _, s := range sec.Stages {
		if s.GPU != nil {
			return true
		}
	}
	return false
}

// writeGPUTable writes the stages' totals, then each device's figures.
func writeGPUTable(b *bytes.Buffer, sec *result.GPU, labels map[[2]string]string) {
	fmt.Fprintf(b, "\nGPU per stage (%s):\n", strings.Join(gpuSourceNames(sec), ", "))
	tw := newTable(b)
	row(tw, "stage", "GPUs", "util", "power W", "mem max MiB", "energy J", "J/out tok", "out tok/s/GPU")
	sources := map[string]bool{}
	for _, s := range sec.Stages {
		if s.GPU == nil {
			continue
		}
		g := s.GPU
		row(tw, label(labels, s), strconv.Itoa(s.GPUs), figPct(g.UtilMeanPct), fig(g.PowerW, 0), fig(g.MemUsedMaxMiB, 0),
			fig(g.EnergyJ, 0), fig(s.JoulesPerToken, 3), fig(s.TokPerSecPerGPU, 1))
		for _, d := range g.Devices {
			sources[d.EnergySource] = true
		}
	}
	tw.Flush()
	b.WriteString(wrap(energyNote(sources), "  ", "    ", maxWidth))
	tw = newTable(b)
	row(tw, "stage", "GPU", "model", "where", "util", "power W", "mem max MiB", "energy J")
	for _, s := range sec.Stages {
		if s.GPU == nil {
			continue
		}
		for _, d := range s.GPU.Devices {
			row(tw, label(labels, s), deviceName(d), orDash(d.Model), deviceWhere(d), figPct(d.UtilMeanPct),
				fig(d.PowerMeanW, 0), fig(d.MemUsedMaxMiB, 0), fig(d.EnergyJ, 0))
		}
	}
	tw.Flush()
}

// gpuSourceNames are the sources the section read.
func gpuSourceNames(sec *result.GPU) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range sec.Stages {
		if s.GPU == nil {
			continue
		}
		for _, d := range s.GPU.Devices {
			if !seen[d.Source] {
				seen[d.Source] = true
				out = append(out, d.Source)
			}
		}
	}
	return out
}

// energyNote says where the stages' energy came from, and what the
// other columns are.
func energyNote(sources map[string]bool) string {
	var parts []string
	if sources[servermetrics.EnergyCounter] {
		parts = append(parts, "the increase of the GPUs' energy counters")
	}
	if sources[servermetrics.EnergyPowerIntegral] {
		parts = append(parts, "the integral of their power (the stage's mean power × its length)")
	}
	if len(parts) == 0 {
		parts = append(parts, "not measured")
	}
	return "energy: " + strings.Join(parts, " and ") + "; J/out tok: that energy ÷ the stage's output tokens; " +
		"util: mean over the GPUs; power, memory: summed over them"
}

// deviceName is "#0 GPU-8c16e996…".
func deviceName(d servermetrics.GPUDevice) string {
	id := d.UUID
	if len(id) > 13 {
		id = id[:13] + "…"
	}
	return strings.TrimSpace("#" + d.Index + " " + id)
}

// deviceWhere is its host, and in Kubernetes the pod using it.
func deviceWhere(d servermetrics.GPUDevice) string {
	where := d.Host
	if where == "" && d.Source == gpu.Binary {
		where = "this machine"
	}
	where = cmp.Or(where, d.Source)
	if d.Pod != "" {
		where += " " + d.Namespace + "/" + d.Pod
	}
	return where
}

// fig is a figure with digits decimals, "-" when not measured.
func fig(v *float64, digits int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

// figPct is a percentage figure, "-" when not measured.
func figPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 0, 64) + "%"
}

// writeSpec shows, per stage, the client's tokens per streamed chunk
// beside the server's acceptance and the TPOT it is meant to lower.
func writeSpec(b *bytes.Buffer, sec *result.GPU, labels map[[2]string]string) {
	var lines []string
	for _, s := range sec.Stages {
		if s.Spec != nil || s.Chunks != nil {
			lines = append(lines, label(labels, s)+": "+specLine(s))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nspeculative decoding:\n")
	for _, l := range lines {
		b.WriteString(wrap(l, "  ", "    ", maxWidth))
	}
	b.WriteString(wrap("tokens/chunk: a request's output tokens (the server's usage) ÷ its streamed text events, over the "+
		"requests; a chunk of k tokens is k−1 accepted drafts when the server streams one step per chunk", "  ", "    ", maxWidth))
}

// specLine is "mean 2.6 tokens/chunk (p50 2.5, p99 4), vLLM acceptance
// 0.71, accepted length 3.13, TPOT p50 4.1 ms".
func specLine(s result.GPUStage) string {
	var parts []string
	if c := s.Chunks; c != nil {
		parts = append(parts, chunkText(c))
	}
	if sp := s.Spec; sp != nil {
		who := servermetrics.ServerName(sp.Server)
		if sp.AcceptRate != nil {
			parts = append(parts, fmt.Sprintf("%s acceptance %.2f", strings.TrimSpace(who), *sp.AcceptRate))
		}
		if sp.AcceptLength != nil {
			parts = append(parts, fmt.Sprintf("mean accepted length %.2f", *sp.AcceptLength))
		}
		if len(sp.PerPosition) > 0 {
			rates := make([]string, len(sp.PerPosition))
			for i, v := range sp.PerPosition {
				rates[i] = fmt.Sprintf("%.2f", v)
			}
			parts = append(parts, "by draft position "+strings.Join(rates, " "))
		}
	}
	if s.TPOTP50MS != nil {
		parts = append(parts, "TPOT p50 "+textfmt.DistMS(metrics.Dist{Count: 1}, *s.TPOTP50MS)+" ms")
	}
	return strings.Join(parts, ", ")
}

func chunkText(c *metrics.Chunks) string {
	return fmt.Sprintf("mean %s tokens/chunk (p50 %s, p99 %s, %s)", trim(c.Mean), trim(c.P50), trim(c.P99),
		textfmt.Count(c.Requests, "request", "requests"))
}

// trim writes a ratio with at most two decimals.
func trim(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
