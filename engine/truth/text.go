package truth

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Text writes the comparison as a table: per metric and quantile,
// llmload's figure, the server's and the error, then the cost per token.
func (c *Comparison) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Against the server's truth log: %d records, %d streamed answers in the run\n", c.Logged, c.Matched)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\tcount (llmload/server)\t")
	for _, q := range Quantiles {
		name := "p" + strconv.FormatFloat(q, 'f', -1, 64)
		fmt.Fprintf(tw, "%s llmload\tserver\terror\t", name)
	}
	fmt.Fprint(tw, "\n")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%d/%d\t", strings.ToUpper(r.Metric), r.Client.Count, r.Server.Count)
		for i := range Quantiles {
			if r.Client.Count == 0 || r.Server.Count == 0 {
				fmt.Fprint(tw, "-\t-\t-\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s ±%s\t", msText(r.Client.At[i]), msText(r.Server.At[i]),
				signed(r.Error(i)), msText(r.Resolution[i]))
		}
		fmt.Fprint(tw, "\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("(error = llmload − server, in ms; ± is the half-width of the result histogram's bucket)\n")
	if p := c.Process; p != nil {
		fmt.Fprintf(&b, "llmload's cost: %.2f s CPU (%.2f user, %.2f system) for %d output tokens", p.CPUS(), p.CPUUserS, p.CPUSystemS, c.Tokens)
		if c.Tokens > 0 {
			fmt.Fprintf(&b, " = %.2f µs per token", float64(c.CPUPerToken.Nanoseconds())/1000)
		}
		fmt.Fprintf(&b, "; peak RSS %.0f MB; %d GCs, %.1f ms paused\n", p.MaxRSSMB, p.GCCycles, p.GCPauseMS)
	} else {
		b.WriteString("llmload's cost: not in the result (written by an older llmload, or the platform does not say)\n")
	}
	for _, n := range c.Notes {
		b.WriteString("note: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// msText prints milliseconds with three decimals (µs).
func msText(ms float64) string { return strconv.FormatFloat(ms, 'f', 3, 64) }

func signed(ms float64) string {
	if ms >= 0 {
		return "+" + msText(ms)
	}
	return msText(ms)
}
