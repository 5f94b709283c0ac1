package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/result"
)

// lintFixture is one lint of each kind a summary lists: a warning from
// the plan, one from the run, an info and an ignored one.
func lintFixture() []lint.Lint {
	return []lint.Lint{
		{ID: lint.NoWarmup, Severity: lint.Warning, Source: lint.FromPlan,
			Message: "no warmup before the first measured stage (sweep/c1): its first requests meet a cold server",
			Fix:     `options.warmup = { requests = 10 }`},
		{ID: lint.RepeatedPrefix, Severity: lint.Warning, Scenario: "sweep", Stage: "c4", Source: lint.FromRun,
			Message: "84% (168 of 200) of stage c4's first requests start with the same 128 bytes (about 32 tokens) as a request of an earlier iteration: the server's prefix cache serves those, so TTFT reads lower",
			Fix:     `start every prompt with something unique, e.g. ("[req_%d] %s"):format(vu.request_id, prompt)`},
		{ID: lint.ShortStage, Severity: lint.Info, Scenario: "sweep", Source: lint.FromRun,
			Message: "stages c1 ≈ 11, c4 ≈ 44 measured fewer requests than the 1,000 a p99 of e2e needs",
			Fix:     "lengthen the stages to c1 ≈ 18m, c4 ≈ 4m40s for a p99 to act on"},
		{ID: lint.NoMaxTokens, Severity: lint.Warning, Scenario: "hit", Source: lint.FromPlan, Ignored: "the server caps answers at 64 tokens",
			Message: "100 of 100 of the requests a dry run of its iterations built (100%) set no max_tokens", Fix: "set max_tokens"},
	}
}

func TestLintsGolden(t *testing.T) {
	golden(t, "lints.txt.golden", render(t, Lints(lintFixture())))
}

// TestLintsInSummaryAndHTML: the summary lists the result's lints near
// its warnings, the HTML report in a section of its own, the JSON under
// lints with every field, and a result without lints shows none of it.
func TestLintsInSummaryAndHTML(t *testing.T) {
	meta, sum := singleFixture()
	r := result.New(meta, sum)
	r.Warnings = []string{"stage c1: something"}
	plain := string(render(t, Text(r)))
	r.Lints = lintFixture()
	text := string(render(t, Text(r)))
	list := string(render(t, Lints(r.Lints)))
	if !strings.Contains(text, "\n"+list+"\nWARNING\n") {
		t.Errorf("summary lacks the lints block before its warnings:\n%s", text)
	}
	if strings.Contains(plain, "lints:") {
		t.Errorf("a result without lints lists some:\n%s", plain)
	}
	html := string(render(t, HTML(r)))
	for _, want := range []string{"<h2>Lints</h2>", "<strong>warning no-warmup</strong>", "[sweep/c4]",
		"ignored: the server caps answers at 64 tokens", `e.g. (&#34;[req_%d] %s&#34;)`} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var b bytes.Buffer
	if err := JSON(r)(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Lints []map[string]any `json:"lints"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Lints) != 4 {
		t.Fatalf("lints in JSON: %v, %v", back.Lints, err)
	}
	if got := back.Lints[3]; got["id"] != "no-max-tokens" || got["severity"] != "warning" || got["ignored"] == nil ||
		got["source"] != "plan" || got["scenario"] != "hit" || got["fix"] != "set max_tokens" {
		t.Errorf("lints[3] = %v", got)
	}
	read, err := result.ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil || len(read.Lints) != 4 || read.Lints[1] != r.Lints[1] {
		t.Errorf("read back: %v, %+v", err, read.Lints)
	}
}
