package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/metrics"
)

// TestConnections: a run over TLS shows each stage's time to a connection
// and its TLS handshakes; a run without TLS shows nothing.
func TestConnections(t *testing.T) {
	tlsStage := metrics.StageSummary{
		Connect: metrics.Dist{Count: 40, P50: 0.08, P99: 9.5},
		TLS:     metrics.Dist{Count: 4, P50: 6.2, P99: 9.1, Max: 9.1},
	}
	var b bytes.Buffer
	writeConnections(&b, []metrics.StageSummary{tlsStage, {}}, []string{"c1", "c2"})
	out := b.String()
	for _, want := range []string{"connections ms", "TLS handshake p50", "c1", "0.08", "9.5", "6.2", "9.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "c2") {
		t.Errorf("a stage with no connections is listed:\n%s", out)
	}
	b.Reset()
	writeConnections(&b, []metrics.StageSummary{{Connect: metrics.Dist{Count: 40, P50: 0.1}}}, []string{"c1"})
	if b.Len() != 0 {
		t.Errorf("a run without TLS shows connections:\n%s", b.String())
	}
}
