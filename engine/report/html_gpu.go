package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// gpuHTML is the report's GPU and speculative-decoding section, the text
// summary's figures as tables; "" for a result without the section.
func gpuHTML(r *result.Result) template.HTML {
	sec := r.GPU
	if sec == nil {
		return ""
	}
	labels := gpuLabels(r)
	var b bytes.Buffer
	b.WriteString("<h2>GPUs</h2>\n")
	if sec.Note != "" {
		b.WriteString(`<p class="note">` + template.HTMLEscapeString(sec.Note) + "</p>\n")
	}
	if hasGPUStage(sec) {
		totals, devices, sources := gpuTables(sec, labels)
		b.WriteString(`<p class="note">` + template.HTMLEscapeString(energyNote(sources)) + "</p>\n")
		writeHTMLTable(&b, totals)
		writeHTMLTable(&b, devices)
	} else if len(sec.Asked) > 0 {
		b.WriteString(`<p class="note">No GPU figures from ` + template.HTMLEscapeString(strings.Join(sec.Asked, ", ")) + ".</p>\n")
	}
	if charts := gpuCharts(r); len(charts) > 0 {
		b.WriteString(`<div class="grid">`)
		for _, c := range charts {
			if err := htmlTemplate.ExecuteTemplate(&b, "chart", c); err != nil {
				b.WriteString(`<p class="note">` + template.HTMLEscapeString(err.Error()) + "</p>")
			}
		}
		b.WriteString("</div>\n")
	}
	if spec := specTable(sec, labels); len(spec.Rows) > 0 {
		b.WriteString("<h3>Speculative decoding</h3>\n")
		writeHTMLTable(&b, spec)
	}
	return template.HTML(b.String()) // built of escaped text and the "table" template
}

// writeHTMLTable renders t with the page's table template.
func writeHTMLTable(b *bytes.Buffer, t htmlTable) {
	if err := htmlTemplate.ExecuteTemplate(b, "table", t); err != nil {
		b.WriteString(`<p class="note">` + template.HTMLEscapeString(err.Error()) + "</p>")
	}
}

func cell(s string) htmlCell { return htmlCell{Text: s} }

// gpuTables are the stages' totals and each device's figures, and the
// energy sources they used.
func gpuTables(sec *result.GPU, labels map[[2]string]string) (totals, devices htmlTable, sources map[string]bool) {
	totals.Head = []string{"stage", "GPUs", "util", "power W", "mem max MiB", "energy J", "J/out tok", "out tok/s/GPU"}
	devices.Head = []string{"stage", "GPU", "model", "where", "util", "power W", "mem max MiB", "energy J", "energy from"}
	sources = map[string]bool{}
	for _, s := range sec.Stages {
		g := s.GPU
		if g == nil {
			continue
		}
		l := htmlCell{Text: label(labels, s), Left: true}
		totals.Rows = append(totals.Rows, []htmlCell{l, cell(strconv.Itoa(s.GPUs)), cell(figPct(g.UtilMeanPct)),
			cell(fig(g.PowerW, 0)), cell(fig(g.MemUsedMaxMiB, 0)), cell(fig(g.EnergyJ, 0)), cell(fig(s.JoulesPerToken, 3)),
			cell(fig(s.TokPerSecPerGPU, 1))})
		for _, d := range g.Devices {
			sources[d.EnergySource] = true
			devices.Rows = append(devices.Rows, []htmlCell{l, cell(deviceName(d)), cell(orDash(d.Model)), cell(deviceWhere(d)),
				cell(figPct(d.UtilMeanPct)), cell(fig(d.PowerMeanW, 0)), cell(fig(d.MemUsedMaxMiB, 0)), cell(fig(d.EnergyJ, 0)),
				cell(orDash(d.EnergySource))})
		}
	}
	return totals, devices, sources
}

// specTable has a row per stage with speculation evidence: the client's
// tokens per chunk beside the server's acceptance and the TPOT.
func specTable(sec *result.GPU, labels map[[2]string]string) htmlTable {
	t := htmlTable{Head: []string{"stage", "tokens/chunk mean", "p50", "p99", "requests", "server", "acceptance", "accepted length", "by draft position", "TPOT p50"}}
	for _, s := range sec.Stages {
		if s.Spec == nil && s.Chunks == nil {
			continue
		}
		cells := []htmlCell{{Text: label(labels, s), Left: true}}
		if c := s.Chunks; c != nil {
			cells = append(cells, cell(trim(c.Mean)), cell(trim(c.P50)), cell(trim(c.P99)), cell(strconv.FormatInt(c.Requests, 10)))
		} else {
			cells = append(cells, cell("-"), cell("-"), cell("-"), cell("-"))
		}
		if sp := s.Spec; sp != nil {
			cells = append(cells, cell(servermetrics.ServerName(sp.Server)), cell(fig(sp.AcceptRate, 2)), cell(fig(sp.AcceptLength, 2)),
				cell(positions(sp.PerPosition)))
		} else {
			cells = append(cells, cell("-"), cell("-"), cell("-"), cell("-"))
		}
		tpot := "-"
		if s.TPOTP50MS != nil {
			tpot = textfmt.DistMS(metrics.Dist{Count: 1}, *s.TPOTP50MS) + " ms"
		}
		t.Rows = append(t.Rows, append(cells, cell(tpot)))
	}
	return t
}

// positions are per-position acceptance rates, "0.85 0.72 0.56"; "-"
// without.
func positions(vs []float64) string {
	if len(vs) == 0 {
		return "-"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strings.Join(out, " ")
}

// gpuChartRoles are the GPU quantities drawn over time, one chart each
// with a line per device.
var gpuChartRoles = []struct {
	role  servermetrics.Role
	title string
}{
	{servermetrics.RoleGPUUtil, "GPU utilisation"},
	{servermetrics.RoleGPUPower, "GPU power"},
	{servermetrics.RoleGPUMemUsed, "GPU memory used"},
}

// gpuCharts draw the GPUs' series over the run, on the time axis of the
// server's charts, stages marked.
func gpuCharts(r *result.Result) []chartOut {
	var srcs []*servermetrics.Result
	srcs = append(srcs, servermetrics.GPUSources(r.ServerMetrics)...)
	if r.GPU != nil {
		for i := range r.GPU.Exporters {
			srcs = append(srcs, servermetrics.GPUSources(&r.GPU.Exporters[i])...)
		}
		srcs = append(srcs, servermetrics.GPUSources(r.GPU.NvidiaSMI)...)
	}
	shift := 0.0
	if origin, ok := seriesOrigin(r); ok && !r.Run.Start.IsZero() {
		shift = origin - float64(r.Run.Start.UnixNano())/1e9
	}
	marks := stageMarks(r, stageLabels(r.Stages))
	var out []chartOut
	for i, c := range gpuChartRoles {
		var lines []chartLine
		unit := ""
		for _, src := range srcs {
			for j := range src.Series {
				if s := &src.Series[j]; s.GPU != nil && s.Role == c.role {
					lines = append(lines, chartLine{Name: deviceName(servermetrics.GPUDevice{GPU: *s.GPU}), T: s.T, V: s.V})
					unit = s.Unit
				}
			}
		}
		if drawn := chartLines(lines, shift); len(drawn) > 0 {
			ch := lineChart{Name: fmt.Sprintf("gpu-%d", i), Title: c.title, XLabel: "time since the first stage started (s)",
				YLabel: unit, Marks: marks, Series: drawn}
			out = append(out, ch.render())
		}
	}
	return out
}
