package run

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
)

func TestTargetURLs(t *testing.T) {
	tests := []struct {
		name string
		p    plan.Plan
		want []string
	}{
		{"the simulator", plan.Plan{}, nil},
		{"one target", plan.Plan{Target: plan.Target{BaseURL: "http://127.0.0.1:8000/v1"}}, []string{"http://127.0.0.1:8000/v1"}},
		{"several targets, each once, the shared settings without a URL", plan.Plan{Targets: []plan.Target{
			{Name: "a", BaseURL: "http://127.0.0.1:8000/v1"}, {Name: "b", BaseURL: "http://10.0.0.2:8000/v1"}, {Name: "c", BaseURL: "http://127.0.0.1:8000/v1"}}},
			[]string{"http://127.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"}},
	}
	for _, tt := range tests {
		if got := targetURLs(tt.p); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The built-in simulator runs in llmload's own process: nothing to find,
// nothing to say; a target on this machine that nothing listens on is
// said in one line and recorded.
func TestLocalServerLookup(t *testing.T) {
	var lines []string
	c := &Config{Log: func(format string, a ...any) { lines = append(lines, format) }}
	if opts, ls := c.localServer(context.Background(), true); opts != nil || ls != nil || len(lines) != 0 {
		t.Errorf("simulated: %v, %+v, logged %q", opts, ls, lines)
	}
	c.Plan.Target.BaseURL = "http://127.0.0.1:1/v1" // port 1: nothing listens
	opts, ls := c.localServer(context.Background(), false)
	if opts != nil || ls == nil || len(ls.Processes) != 0 || !strings.HasPrefix(ls.Note, "not found: ") {
		t.Errorf("unheard target: %v, %+v", opts, ls)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "local server: ") {
		t.Errorf("logged %q, want one line", lines)
	}
}
