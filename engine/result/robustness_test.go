package result

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

func TestRobustnessWarning(t *testing.T) {
	clean := map[string]metrics.RobustnessSummary{"empty": {Count: 3, Handled: 3, Verdict: engine.VerdictHandled}}
	if got := robustnessWarning(clean); got != "" {
		t.Errorf("warning without defects: %q", got)
	}
	bad := map[string]metrics.RobustnessSummary{"overlong": {Count: 4, Handled: 1, Defects: 3, Verdict: engine.VerdictDefect}}
	if got, want := robustnessWarning(bad), "3 of 4 malformed requests got a defective answer"; !strings.Contains(got, want) {
		t.Errorf("warning %q lacks %q", got, want)
	}
}
