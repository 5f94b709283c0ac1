package report

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeCapacity writes each capacity search's answer with what its probes
// had to meet, then its probes in the order run, then why each was
// decided: the answer is only as good as the probes under it.
func writeCapacity(b *bytes.Buffer, r *result.Result) {
	multi := slices.ContainsFunc(r.Stages, func(s metrics.StageSummary) bool { return s.Scenario != r.Stages[0].Scenario })
	for i := range r.Capacity {
		c := &r.Capacity[i]
		prefix := ""
		if multi || len(r.Capacity) > 1 {
			prefix = c.Scenario + ": "
		}
		b.WriteString("\n")
		b.WriteString(wrap(fmt.Sprintf("%s%s (SLO: %s; precision %s%%)", prefix, c.Answer(), c.Criteria(r.Run.SLO),
			textfmt.Load(100*c.Search.Precision)), "", "  ", maxWidth))
		if c.Stopped != "" {
			b.WriteString(wrap("stopped: "+c.Stopped, "  ", "    ", maxWidth))
		}
		if len(c.Probes) > 0 {
			writeProbes(b, c)
		}
	}
}

// writeProbes is the probe table, then a line per probe saying why.
func writeProbes(b *bytes.Buffer, c *result.Capacity) {
	labels := make([]string, len(c.Probes))
	phases := make([]string, len(c.Probes))
	verdicts := make([]string, len(c.Probes))
	for i, p := range c.Probes {
		labels[i], phases[i], verdicts[i] = probeLabel(p), p.Phase, p.Verdict
	}
	head, labels := leftColumn("probe", labels)
	phaseHead, phases := leftColumn("phase", phases)
	verdictHead, verdicts := leftColumn("verdict", verdicts)
	load := "target/s"
	if c.Load == plan.CapacityVUs {
		load = "VUs"
	}
	tw := newTable(b)
	row(tw, head, phaseHead, load, verdictHead, "requests", "good %", "TTFT p50", "TTFT p99", "TPOT p99", "req/s")
	for i, p := range c.Probes {
		row(tw, labels[i], phases[i], textfmt.Load(p.Load), verdicts[i], fmt.Sprint(p.Requests), goodText(p.GoodShare),
			probeMS(p.TTFTP50MS), probeMS(p.TTFTP99MS), probeMS(p.TPOTP99MS), fmtRate(p.ReqPerSec))
	}
	tw.Flush()
	b.WriteString("latencies in ms, over each probe's windows (warm-up excluded)\n")
	for _, p := range c.Probes {
		why := p.Why
		if p.Stop != "" {
			why = p.Stop + cond(why != "", " ("+why+")", "")
		}
		if start := p.Settle.Text(); start != "" {
			why = cond(why != "", why+"; ", "") + start
		}
		if why != "" {
			b.WriteString(wrap(probeLabel(p)+": "+why, "  ", "    ", maxWidth))
		}
	}
}

// probeLabel names a probe by its first window, with the windows added
// when it could not decide: "probe-03 +2".
func probeLabel(p result.CapacityProbe) string {
	name := fmt.Sprintf("probe %d", p.Index+1)
	if len(p.Stages) > 0 {
		name = p.Stages[0]
	}
	if p.Extended > 0 {
		name += fmt.Sprintf(" +%d", p.Extended)
	}
	return name
}

func goodText(share *float64) string {
	if share == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**share)
}

// probeMS prints a probe's latency figure; "-" for none measured.
func probeMS(v float64) string {
	if v <= 0 {
		return "-"
	}
	return textfmt.DistMS(metrics.Dist{Count: 1}, v)
}

func cond(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
