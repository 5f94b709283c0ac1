package threshold

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
)

// TestTargetFilter: with options.targets a target filter must name one
// of them; with one target it is a user tag like any other.
func TestTargetFilter(t *testing.T) {
	several := plan.Plan{Targets: []plan.Target{{Name: "a"}, {Name: "b"}},
		Scenarios: []plan.Scenario{{Name: "s", Stages: []plan.Stage{{Name: "c1"}}}}}
	for _, tc := range []struct {
		name string
		p    plan.Plan
		expr string
		want string // "" parses
	}{
		{"known target", several, "ttft{target:b}.p99", ""},
		{"unknown target", several, "ttft{target:c}.p99", `tag filter: no target named "c" (targets: a, b)`},
		{"one target: a user tag", plan.Plan{Scenarios: several.Scenarios}, "ttft{target:c}.p99", ""},
	} {
		_, err := Parse(plan.ThresholdSpec{Expr: tc.expr, Conditions: []string{"< 1s"}}, KnownOf(tc.p))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
