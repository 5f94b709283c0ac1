package report

import (
	"github.com/llmload/llmload/engine/result"
)

// breakdownSection is the HTML's account of where the time went: the
// p50 and p99 tables, the spans' account and the negative residuals.
type breakdownSection struct {
	Sums, Note string
	P50, P99   htmlTable
	// Server is the stages split by the server's /metrics histograms
	// alone, ServerNote how to read them.
	Server     htmlTable
	ServerNote string
	Spans      string   // the receiver's account; "" without one
	Warnings   []string // about the spans
	Negative   []string // requests whose residual was below zero
}

// breakdownHTML is r's breakdown section; nil when no stage's requests
// were timed by the server and no receiver ran.
func breakdownHTML(r *result.Result, labels []string) *breakdownSection {
	p50, p99 := breakdownRows(r.Stages, labels)
	server := serverPartsRows(r, labels)
	if len(p50) == 0 && len(server) == 0 && r.ServerSpans == nil && len(r.NegativeResiduals) == 0 {
		return nil
	}
	head := append([]string{"stage"}, breakdownHead...)
	s := &breakdownSection{Sums: breakdownSums, Note: breakdownNote, P50: htmlTable{Head: head}, P99: htmlTable{Head: head}}
	for i := range p50 {
		s.P50.Rows = append(s.P50.Rows, htmlRow(p50[i]))
		s.P99.Rows = append(s.P99.Rows, htmlRow(p99[i]))
	}
	s.Server, s.ServerNote = htmlTable{Head: append([]string{"stage"}, serverPartsHead...)}, serverPartsNote
	s.Server.Head[2], s.Server.Head[4], s.Server.Head[6] = "queue p99", "prefill p99", "decode p99"
	for _, row := range server {
		s.Server.Rows = append(s.Server.Rows, htmlRow(row))
	}
	if sp := r.ServerSpans; sp != nil {
		s.Spans = "Received at " + sp.Listen + ": " + spansLine(sp) + "."
		s.Warnings = spansWarnings(sp)
	}
	for _, n := range r.NegativeResiduals {
		s.Negative = append(s.Negative, negativeLine(n))
	}
	return s
}
