package threshold

import (
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// probeOps are the comparison operators a probe condition may use, longest
// first so that "<=" is not read as "<".
var probeOps = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseProbeCondition parses one condition a capacity search's probes must
// meet, written whole: "ttft.p99 < 1s", "errors.rate < 1%". The metric is a
// built-in one without a filter: each probe is judged on its own stages.
func ParseProbeCondition(text string) (*Threshold, error) {
	at := -1
	for _, op := range probeOps {
		if i := strings.Index(text, op); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at <= 0 {
		return nil, fmt.Errorf("%q: expected a metric, an operator and a bound, e.g. %q", text, "ttft.p99 < 1s")
	}
	expr, cond := strings.TrimSpace(text[:at]), strings.TrimSpace(text[at:])
	if strings.ContainsAny(expr, "{}") {
		return nil, fmt.Errorf("%q: a probe condition takes no filter (each probe is judged on its own requests)", text)
	}
	if capacityLoad(expr) != "" {
		return nil, fmt.Errorf("%q: a probe is judged on its requests, not on the capacity the search finds", text)
	}
	t, err := Parse(plan.ThresholdSpec{Expr: expr, Conditions: []string{cond}}, Known{Metrics: metrics.Builtin()})
	if err != nil {
		return nil, fmt.Errorf("%q: %w", text, err)
	}
	// A probe is judged on a confidence interval, which says on which side
	// of a bound the truth lies but never that it equals one.
	if c := t.Conditions[0]; c.Op == "==" || c.Op == "!=" {
		return nil, fmt.Errorf("%q: a probe condition compares with <, <=, > or >=, not %s", text, c.Op)
	}
	// A counter's rate divides by windows whose length the probe's
	// several stages do not give; its count needs none.
	if t.Kind == engine.MetricCounter && t.Conditions[0].Agg == metrics.AggRate {
		return nil, fmt.Errorf("%q: a counter's rate is not judged per probe (the probe's load sets it); use its count", text)
	}
	return t, nil
}
