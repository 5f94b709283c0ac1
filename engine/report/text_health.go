package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// writeClientHealth shows llmload's own health per stage, so a reader can
// tell a slow server from a slow load generator.
func writeClientHealth(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	var names, lines []string
	for i, s := range stages {
		if c := s.Client; c != nil {
			names, lines = append(names, labels[i]), append(lines, clientLine(c))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nclient self-check\n")
	_, names = leftColumn("", names)
	for i := range lines {
		indent := "  " + strings.Repeat(" ", len([]rune(names[i]))+2)
		b.WriteString(wrap(lines[i], "  "+names[i]+"  ", indent, maxWidth))
	}
}

// clientLine reads like top: llmload's CPU is a percentage of one core;
// the machine's is a percentage of all its cores.
func clientLine(c *engine.ClientCheck) string {
	cores := max(c.Cores, 1)
	line := fmt.Sprintf("client: CPU %.0f%% (of %d%% for %d %s), scheduling p99 %s ms, GC pauses p99 %s ms",
		c.CPUPercent, 100*cores, cores, plural(int64(cores), "core", "cores"), fmtSmallMS(c.SchedLatencyP99MS), fmtSmallMS(c.GCPauseP99MS))
	if c.MachineMeasured {
		line += fmt.Sprintf("; machine: CPU %.0f%% busy (llmload %.0f%% of it), steal %.0f%%, run queue %.1f on %d %s",
			c.MachineCPUPercent, c.OwnSharePercent, c.StealPercent, c.RunQueue, c.MachineCores, plural(int64(c.MachineCores), "core", "cores"))
	}
	if c.Bound {
		line += "  ! CLIENT-BOUND"
	}
	if c.MachineBusy {
		line += "  ! MACHINE-BUSY"
	}
	return line
}

// fmtSmallMS prints a short duration in ms to two decimals below 1 ms,
// without trailing zeros: 0.2, 0.05.
func fmtSmallMS(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// writeTokenNotes says where token counts, and so tok/s and TPOT, are less
// exact than they look: the server's usage disagrees with the tokenizer,
// or tokens were counted as text events.
func writeTokenNotes(b *bytes.Buffer, r *Result, labels []string) {
	tokenizer := cmp.Or(r.Run.Tokenizer, engine.DefaultTokenizer)
	var notes []string
	for i, s := range r.Stages {
		if tc := s.TokenCheck; tc.Mismatched > 0 {
			notes = append(notes, fmt.Sprintf("%s: server usage and the %s count disagree by more than %.0f%% on %d of %s (mean difference %.1f%%)",
				labels[i], tokenizer, 100*metrics.TokenMismatch, tc.Mismatched, count(tc.Compared, "request", "requests"), 100*tc.MeanRelDiff))
		}
		if n := s.TokensSource[engine.TokensFromEvents]; n > 0 {
			notes = append(notes, fmt.Sprintf("%s: output tokens of %d of %s are counts of text events "+
				"(no usage from the server, no tokenizer): approximate, and so are tok/s and TPOT", labels[i], n, count(s.OK, "request", "requests")))
		}
	}
	if len(notes) == 0 {
		return
	}
	b.WriteString("\ntokens\n")
	for _, n := range notes {
		b.WriteString(wrap(n, "  ", "    ", maxWidth))
	}
}
