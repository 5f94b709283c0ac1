package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeBreakdown writes where each stage's time went, for the stages
// whose server timed its requests (trace spans, llama.cpp's timings): one
// table of medians and one of p99s, then the spans' account and the
// requests whose residual was below zero. A run the server timed nothing
// of writes nothing but the receiver's account, when it had one.
func writeBreakdown(b *bytes.Buffer, r *result.Result, labels []string) {
	if p50, p99 := breakdownRows(r.Stages, labels); len(p50) > 0 {
		b.WriteString("\nwhere the time goes, p50 (ms; " + breakdownSums + ")\n")
		writeRows(b, breakdownHead, p50)
		b.WriteString("\nwhere the time goes, p99 (ms)\n")
		writeRows(b, breakdownHead, p99)
		b.WriteString(breakdownNote + "\n")
	}
	if rows := serverPartsRows(r, labels); len(rows) > 0 {
		b.WriteString("\nthe server's own split, from its /metrics histograms (ms; per stage, not per request)\n")
		writeRows(b, serverPartsHead, rows)
		b.WriteString(serverPartsNote + "\n")
	}
	writeSpansAccount(b, r.ServerSpans)
	if len(r.NegativeResiduals) > 0 {
		b.WriteString("  negative residual (the server timed more than llmload measured: clocks or definitions disagree):\n")
		for _, n := range r.NegativeResiduals {
			fmt.Fprintf(b, "    %s\n", negativeLine(n))
		}
	}
}

var serverPartsHead = []string{"queue p50", "p99", "prefill p50", "p99", "decode p50", "p99", "from"}

const serverPartsNote = "p50: the mean of the scrape intervals' medians over the stage, p99: the worst interval's; " +
	"the stages whose requests the server timed one by one are in the tables above"

// serverPartsRows are the rows of the stages the server's /metrics split
// but no span or timings did, label first.
func serverPartsRows(r *result.Result, labels []string) [][]string {
	var rows [][]string
	for i, st := range r.Stages {
		if st.Breakdown != nil {
			continue
		}
		for _, sp := range r.ServerParts {
			if sp.Scenario != st.Scenario || sp.Stage != st.Stage {
				continue
			}
			row := []string{labels[i]}
			var from []string
			for _, p := range []*servermetrics.Part{sp.Queue, sp.Prefill, sp.Decode} {
				row = append(row, partMS(p, true), partMS(p, false))
				if p != nil && p.Metric != "" {
					from = append(from, p.Metric)
				}
			}
			rows = append(rows, append(row, strings.Join(from, ", ")))
		}
	}
	return rows
}

// partMS is a part's p50 (or p99) in ms, "-" when the server gave none.
func partMS(p *servermetrics.Part, p50 bool) string {
	v := (*float64)(nil)
	if p != nil {
		v = p.P99MS
		if p50 {
			v = p.P50MS
		}
	}
	if v == nil {
		return "-"
	}
	return textfmt.MS(*v)
}

// The breakdown's sums and notes, alike in the text and the HTML.
const (
	breakdownSums = "TTFT = upload + residual + queue + prefill, E2E = TTFT + decode + tail"
	breakdownNote = "each column is its own percentile: they do not add up to TTFT's; residual: network both ways and the server's " +
		"front (parsing, tokenising), what neither side timed; with llama.cpp's timings the wait for a slot is in it too (queue -)"
)

var breakdownHead = []string{"timed", "from", "TTFT", "upload", "residual", "queue", "prefill", "decode", "tail", "residual<0"}

// breakdownRows are the p50 and p99 tables' rows, label first: one per
// stage with a breakdown.
func breakdownRows(stages []metrics.StageSummary, labels []string) (p50, p99 [][]string) {
	for i, s := range stages {
		bd := s.Breakdown
		if bd == nil {
			continue
		}
		from, neg := breakdownSource(bd), "-"
		if bd.Negative > 0 {
			neg = strconv.FormatInt(bd.Negative, 10)
		}
		cells := func(pick func(metrics.Dist) float64) []string {
			out := []string{labels[i], strconv.FormatInt(bd.Requests, 10), from, textfmt.DistMS(s.TTFT, pick(s.TTFT))}
			for _, d := range []metrics.Dist{bd.Upload, bd.Residual, bd.Queue, bd.Prefill, bd.Decode, bd.Tail} {
				out = append(out, textfmt.DistMS(d, pick(d)))
			}
			return append(out, neg)
		}
		p50 = append(p50, cells(func(d metrics.Dist) float64 { return d.P50 }))
		p99 = append(p99, cells(func(d metrics.Dist) float64 { return d.P99 }))
	}
	return p50, p99
}

// breakdownSource says what split a stage's requests: "spans",
// "timings", or both with their counts.
func breakdownSource(bd *metrics.BreakdownSummary) string {
	switch {
	case bd.FromSpans > 0 && bd.FromTimings > 0:
		return fmt.Sprintf("spans %d, timings %d", bd.FromSpans, bd.FromTimings)
	case bd.FromSpans > 0:
		return "spans"
	default:
		return "timings"
	}
}

// writeSpansAccount writes what the trace receiver took and how its
// spans met the requests.
func writeSpansAccount(b *bytes.Buffer, s *result.ServerSpans) {
	if s == nil {
		return
	}
	fmt.Fprintf(b, "\nserver spans (received at %s): %s\n", s.Listen, spansLine(s))
	for _, w := range spansWarnings(s) {
		b.WriteString("  " + w + "\n")
	}
}

// spansLine counts the spans and the requests they met.
func spansLine(s *result.ServerSpans) string {
	line := fmt.Sprintf("%d spans, %d joined to their request by trace id", s.Spans, s.Joined)
	if s.ByRequestID > 0 {
		line += fmt.Sprintf(", %d by the server's request id", s.ByRequestID)
	}
	return line + fmt.Sprintf("; %d of %d traced requests got none", s.NoSpan, s.Requests)
}

// spansWarnings are what a reader should know about the spans: none
// arrived, some met no request, some were malformed.
func spansWarnings(s *result.ServerSpans) []string {
	var out []string
	if s.Spans == 0 && s.Requests > 0 {
		out = append(out, "no span arrived: is the server's --otlp-traces-endpoint set to http://"+s.Listen+"?")
	}
	if s.ByRequestID > 0 {
		out = append(out, fmt.Sprintf("%d spans did not continue the traceparent llmload sent (joined by request id instead): a gateway may rewrite it", s.ByRequestID))
	}
	for _, c := range []struct {
		n    int64
		what string
	}{
		{s.Unjoined, "met no request of this run (another client's, or after the wait)"},
		{s.Evicted, "were dropped unjoined when too many waited for their request"},
		{s.Duplicates, "were duplicates, counted once"},
		{s.Malformed, "carried a non-numeric or negative timing (that part left out)"},
		{s.Other, "were not request spans (none of the request attributes)"},
		{s.Rejected, "came in payloads that could not be decoded"},
	} {
		if c.n > 0 {
			out = append(out, fmt.Sprintf("%d spans %s", c.n, c.what))
		}
	}
	return out
}

func negativeLine(n result.NegativeResidual) string {
	id := n.RequestID
	if id == "" {
		id = "(no request id)"
	}
	return fmt.Sprintf("%s/%s request %s trace %s: TTFT %s ms, residual %s ms (%s)", n.Scenario, n.Stage, id,
		n.TraceID, strconv.FormatFloat(n.TTFTMS, 'f', 3, 64), strconv.FormatFloat(n.ResidualMS, 'f', 3, 64), n.Source)
}
