package report

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeConnections writes, for runs over TLS, the time to a connection
// and the TLS handshake's part of it, per stage: neither is in any
// latency (t0 is when the request was written), so a slow handshake —
// a gateway's, an HSM's — would otherwise go unseen.
func writeConnections(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	if !slices.ContainsFunc(stages, func(s metrics.StageSummary) bool { return s.TLS.Count > 0 }) {
		return
	}
	b.WriteString("\nconnections ms (in no latency: t0 is when a request was written)\n")
	tw := newTable(b)
	row(tw, "  stage", "connect p50 ", "p99 ", "n", "TLS handshake p50 ", "p99 ", "max ", "new TLS connections")
	for i, s := range stages {
		if s.Connect.Count == 0 && s.TLS.Count == 0 {
			continue
		}
		row(tw, "  "+labels[i], textfmt.DistMS(s.Connect, s.Connect.P50), textfmt.DistMS(s.Connect, s.Connect.P99),
			fmt.Sprint(s.Connect.Count), textfmt.DistMS(s.TLS, s.TLS.P50), textfmt.DistMS(s.TLS, s.TLS.P99),
			textfmt.DistMS(s.TLS, s.TLS.Max), fmt.Sprint(s.TLS.Count))
	}
	tw.Flush()
}
