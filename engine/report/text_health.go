package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
	"github.com/llmload/llmload/engine/tokenize"
)

// writeClientHealth shows llmload's own health per stage, so a reader can
// tell a slow server from a slow load generator. server names the local
// server's processes ("" when unknown).
func writeClientHealth(b *bytes.Buffer, stages []metrics.StageSummary, labels []string, server string) {
	var names, lines []string
	for i, s := range stages {
		if c := s.Client; c != nil {
			names, lines = append(names, labels[i]), append(lines, clientLine(c, server))
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
// the machine's is a percentage of all its cores. Beside a local server
// (named by server) the machine's CPU is split into llmload's, the
// server's and the rest's.
func clientLine(c *engine.ClientCheck, server string) string {
	cores := max(c.Cores, 1)
	line := fmt.Sprintf("client: CPU %.0f%% (of %d%% for %d %s), scheduling p99 %s ms, GC pauses p99 %s ms",
		c.CPUPercent, 100*cores, cores, textfmt.Plural(int64(cores), "core", "cores"), fmtSmallMS(c.SchedLatencyP99MS), fmtSmallMS(c.GCPauseP99MS))
	switch {
	case c.MachineMeasured && c.Server != nil:
		line += "; machine: " + splitText(c, server)
	case c.MachineMeasured:
		line += fmt.Sprintf("; machine: CPU %.0f%% busy (llmload %.0f%% of it), steal %.0f%%, run queue %.1f on %d %s",
			c.MachineCPUPercent, c.OwnSharePercent, c.StealPercent, c.RunQueue, c.MachineCores, textfmt.Plural(int64(c.MachineCores), "core", "cores"))
	}
	if c.Bound {
		line += "  ! CLIENT-BOUND"
	}
	if c.MachineBusy {
		line += "  ! MACHINE-BUSY"
	}
	return line
}

// splitText is the machine's CPU beside a local server: the window's mean
// split into llmload, the server and other processes, with the busiest
// sample, so that a busy server is not read as a busy machine.
func splitText(c *engine.ClientCheck, server string) string {
	s := c.Server
	who := "server"
	if server != "" {
		who += " (" + server + ")"
	}
	t := fmt.Sprintf("CPU %.0f%% on average (highest %.0f%%): llmload %.0f%%, %s %.0f%%, other %.0f%%",
		s.MachinePercent, c.MachineCPUPercent, s.OwnPercent, who, s.ServerPercent, s.OtherPercent)
	if s.Disagrees {
		t += fmt.Sprintf(" (llmload and the server add up to %.0f%%, more than the machine counted: the measurements disagree)", s.OwnPercent+s.ServerPercent)
	}
	t += fmt.Sprintf(", steal %.0f%%, run queue %.1f on %d %s", c.StealPercent, c.RunQueue, c.MachineCores, textfmt.Plural(int64(c.MachineCores), "core", "cores"))
	if len(s.Reasons) > 0 {
		t += "; llmload waited for cores the server held (not flagged: the server's work is what is measured)"
	}
	return t
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

// writeTokenNotes says, once for the run, where token counts, and so tok/s
// and TPOT, rest on something else than the server's word: the client's
// tokenizer disagrees with the server's usage (information: the counts are
// usage's), no usage came and the tokenizer or the text events counted.
// Stages are not named: the cause is the run's, not a stage's.
func writeTokenNotes(b *bytes.Buffer, r *result.Result, _ []string) {
	notes := tokenNotes(r)
	if len(notes) == 0 {
		return
	}
	b.WriteString("\ntokens\n")
	for _, n := range notes {
		b.WriteString(wrap(n, "  ", "    ", maxWidth))
	}
}

// tokenNotes are the sentences of writeTokenNotes, for every format.
func tokenNotes(r *result.Result) []string {
	run := metrics.SumTokens(r.Stages)
	tokenizer := cmp.Or(r.Run.Tokenizer, plan.DefaultTokenizer)
	var notes []string
	if tc := run.Check; tc.Mismatched > 0 {
		notes = append(notes, mismatchNote(tokenizer, tc))
	}
	if n := run.Sources[engine.TokensFromTokenizer]; n > 0 {
		notes = append(notes, fallbackNote(tokenizer, n, run.OK))
	}
	if n := run.Sources[engine.TokensFromEvents]; n > 0 {
		notes = append(notes, fmt.Sprintf("output tokens of %d of %s are counts of text events "+
			"(no usage from the server, no tokenizer): approximate, and so are tok/s and TPOT", n, textfmt.Count(run.OK, "request", "requests")))
	}
	return notes
}

// mismatchNote says that the client's tokenizer counts otherwise than the
// server, with the fix; the server's counts stand. Only a mean difference
// beyond TokenMismatch says the tokenizer is another model's: a few
// requests off (a stop sequence, a special token) are not that.
func mismatchNote(tokenizer string, tc metrics.TokenCheck) string {
	s := fmt.Sprintf("note: the offline tokenizer %s differs from the server's usage by %.1f%% on average "+
		"(%d of %s compared differ by more than %.0f%%)",
		tokenizer, 100*tc.MeanRelDiff, tc.Mismatched, textfmt.Count(tc.Compared, "request", "requests"), 100*metrics.TokenMismatch)
	switch {
	case tokenize.IsFile(tokenizer):
		return s + ": is it the served model's tokenizer.json? Output tokens are from the server's usage either way"
	case tc.MeanRelDiff > metrics.TokenMismatch:
		s += ": it is not the model's tokenizer"
	}
	return s + `. Set options.target.tokenizer to the model's tokenizer.json (or "none") to count exactly; ` +
		"output tokens are from the server's usage either way"
}

// fallbackNote says which tokenizer counted the output tokens the server
// gave no usage for.
func fallbackNote(tokenizer string, n, ok int64) string {
	s := fmt.Sprintf("output tokens of %d of %s were counted by llmload's tokenizer %s (the server sent no usage)",
		n, textfmt.Count(ok, "request", "requests"), tokenizer)
	if tokenize.IsFile(tokenizer) {
		return s
	}
	return s + ", which may not be the model's: set options.target.tokenizer to the model's tokenizer.json to count exactly"
}

// serverName names the local server's processes: the run's, or a merged
// run's segments' (each name once); "" when none was found.
func serverName(r *result.Result) string {
	if name := r.Run.LocalServer.Name(); name != "" {
		return name
	}
	var names []string
	for _, seg := range r.Run.Segments {
		if name := seg.LocalServer.Name(); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, "; ")
}

// localServerText is the run's local server in a line: its processes and
// their mean CPU per stage, or why none was found; "" for a remote target.
func localServerText(r *result.Result, labels []string) string {
	l := r.Run.LocalServer
	if l == nil {
		return ""
	}
	if len(l.Processes) == 0 {
		return l.Note
	}
	var parts []string
	for i, s := range r.Stages {
		if c := s.Client; c != nil && c.Server != nil {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", labels[i], c.Server.ServerPercent))
		}
	}
	t := l.Name() + ", on this machine: its CPU is counted apart from other processes'"
	if len(parts) > 0 {
		t += "; its mean share of all cores per stage: " + strings.Join(parts, ", ")
	}
	return t
}

// writeDrift says whether llmload's own process grew over a long load:
// the figures a soak holds flat, early and late after the warm-up.
func writeDrift(b *bytes.Buffer, p *result.Process) {
	if p == nil || p.Drift == nil {
		return
	}
	d := p.Drift
	var parts []string
	for _, f := range d.DriftFigures() {
		if f.DriftFigure == nil {
			continue
		}
		digits := 0
		if f.Unit != "" {
			digits = 1
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s%s (%+.0f%%)", f.Name, strconv.FormatFloat(f.Early, 'f', digits, 64),
			strconv.FormatFloat(f.Late, 'f', digits, 64), f.Unit, f.ChangePercent))
	}
	if len(parts) == 0 {
		return
	}
	line := fmt.Sprintf("llmload held from %s to %s of the run (after the warm-up; medians of the first and last third): %s",
		clock(d.FromS), clock(d.ToS), strings.Join(parts, ", "))
	if g := d.Growing(); len(g) > 0 {
		line += "  ! GROWING: " + strings.Join(g, ", ")
	} else {
		line += ": flat within 10%"
	}
	if p.WithSimulator {
		line += " (the built-in simulator runs in this process: its memory and goroutines are in these figures)"
	}
	b.WriteString(wrap(line, "  ", "    ", maxWidth))
}

// clock is seconds as m:ss or h:mm:ss.
func clock(s float64) string {
	t := int64(math.Round(s))
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}
