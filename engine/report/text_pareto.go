package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/analysis"
)

// writePareto writes each sweep's Pareto front of per-user speed against
// total throughput, a row per stage, and its best operating point, where
// at least two stages placed a point: with one, there is no trade-off to
// read.
func writePareto(b *bytes.Buffer, fronts []analysis.ParetoFront) {
	for _, f := range fronts {
		if len(f.Points) < 2 {
			continue
		}
		fmt.Fprintf(b, "\nPareto front of %s: output tok/s per user against output tok/s in all\n", f.Scenario)
		writeParetoTable(b, f)
		for _, l := range []struct{ head, items string }{
			{"left out: ", strings.Join(skippedStages(f), ", ")},
			{"suspect: ", cmpSuffix(f.Suspect, " (see WARNING)")},
			{"best meeting the SLO: ", f.BestText},
			{"", paretoLegend(f)},
		} {
			if l.items != "" {
				b.WriteString(wrap(l.head+l.items, "  ", "    ", maxWidth))
			}
		}
	}
}

// writeParetoTable writes a row per point: its figures and where it
// stands against the front.
func writeParetoTable(b *bytes.Buffer, f analysis.ParetoFront) {
	var stages, loads, stands []string
	for _, p := range f.Points {
		stages, loads = append(stages, p.Stage), append(loads, loadWords(p.Load, p.LoadUnit))
		stands = append(stands, standing(p, f.Best))
	}
	stageHead, stages := leftColumn("stage", stages)
	loadHead, loads := leftColumn("load", loads)
	standHead, stands := leftColumn("front", stands)
	tw := newTable(b)
	row(tw, slices.Concat([]string{stageHead, loadHead, "tok/s/user", "tok/s"}, optional(f, "tok/s/GPU", "good %"), []string{standHead})...)
	for i, p := range f.Points {
		perUser := tokRate(p.PerUserTokPerSec)
		if p.Tentative {
			perUser += "*"
		}
		extra := optional(f, tokRate(p.TokPerSecPerGPU), pctCell(p.GoodShare))
		row(tw, slices.Concat([]string{stages[i], loads[i], perUser, tokRate(p.TokPerSec)}, extra, []string{stands[i]})...)
	}
	tw.Flush()
}

// optional keeps the per-GPU cell when the GPU count is known and the
// good % cell when an SLO is set.
func optional(f analysis.ParetoFront, perGPU, good string) []string {
	var out []string
	if f.GPUs > 0 {
		out = append(out, perGPU)
	}
	if f.SLOSet {
		out = append(out, good)
	}
	return out
}

// standing says where p stands: "on it", "on it, best", "below: c8
// beats it on both".
func standing(p analysis.ParetoPoint, best string) string {
	s := "below: " + p.DominatedBy + " beats it on both"
	if p.OnFront {
		s = "on it"
	}
	if p.Stage == best {
		s += ", best"
	}
	return s
}

func pctCell(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }

// paretoLegend says how the figures were computed, and what a star means
// when one is shown.
func paretoLegend(f analysis.ParetoFront) string {
	s := "tok/s/user: 1000 / the stage's TPOT p50 (AIPerf's output token throughput per user, at the median request)"
	if f.SLOSet {
		s += fmt.Sprintf("; good %%: the requests within the SLO; a stage meets it from %.0f%%", analysis.SLOAttainment*100)
	}
	if slices.ContainsFunc(f.Points, func(p analysis.ParetoPoint) bool { return p.Tentative }) {
		s += "; * TPOT p50 from too few samples"
	}
	return s
}

// cmpSuffix is s with suffix, or "" when s is.
func cmpSuffix(s, suffix string) string {
	if s == "" {
		return ""
	}
	return s + suffix
}

func skippedStages(f analysis.ParetoFront) []string {
	var out []string
	for _, s := range f.Skipped {
		out = append(out, fmt.Sprintf("%s (%s)", s.Stage, s.Reason))
	}
	return out
}

// loadWords renders a stage's load: "1 VU", "16 VUs", "2.5 req/s".
func loadWords(load float64, unit string) string {
	if unit == analysis.UnitVUs && load == 1 {
		return "1 VU"
	}
	return trimZeros(load) + " " + unit
}

// tokRate renders a token rate with about three significant figures
// ("912", "41.2", "7.35") and whole numbers from a hundred up.
func tokRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
