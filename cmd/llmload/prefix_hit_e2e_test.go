package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// prefixHitScenario asks 60% of every chat prompt's tokens from the
// prefix cache, at lengths that vary from prompt to prompt; the warmup
// puts the shared prefix in the cache before the stage is measured.
const prefixHitScenario = `
local llm = require("llmload")
local gen = llm.synthetic { input_tokens = llm.dist.normal(500, 100), output_tokens = llm.dist.fixed(8),
                            prefix_hit = 0.6 }
options = { warmup = { requests = 5 }, vus = 4, duration = "4s" }
function iteration(vu)
  local p = gen:next()
  llm.chat { messages = { { role = "user", content = p.prompt } }, max_tokens = p.max_tokens, ignore_eos = true }
end
`

// TestE2EPrefixHit runs llm.synthetic's prefix_hit = 0.6 on the built-in
// simulator (16-token blocks, the cl100k tokenizer, a chat template): the
// server's hit share over the measured requests is within 5 points of
// 60%, and the summary sets the two figures side by side.
func TestE2EPrefixHit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	dir := t.TempDir()
	script, out := filepath.Join(dir, "prefix_hit.lua"), filepath.Join(dir, "result.json")
	writeTestFile(t, script, prefixHitScenario)
	stdout, stderr, code := runBinary(t, nil, "run", script, "--seed", "29", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res struct {
		Stages []struct {
			OK           int64 `json:"ok"`
			PrefixTarget *struct {
				Requests     int64    `json:"requests"`
				PromptTokens int64    `json:"prompt_tokens"`
				AskedShare   float64  `json:"asked_share"`
				ServedShare  *float64 `json:"served_share"`
			} `json:"prefix_target"`
		} `json:"stages"`
	}
	data, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(data, &res) != nil || len(res.Stages) != 1 {
		t.Fatalf("result.json: %v\n%.2000s", err, data)
	}
	st := res.Stages[0]
	pt := st.PrefixTarget
	if pt == nil || pt.ServedShare == nil {
		t.Fatalf("stage has no prefix target with a served share: %+v\n%s", pt, stdout)
	}
	if pt.Requests != st.OK || pt.Requests < 20 {
		t.Errorf("the target covers %d requests of %d ok, want all of them and at least 20", pt.Requests, st.OK)
	}
	if math.Abs(pt.AskedShare-0.6) > 0.005 {
		t.Errorf("asked share %.4f, want 0.6 (round(0.6 × length) of each prompt)", pt.AskedShare)
	}
	if served := *pt.ServedShare; math.Abs(served-0.6) > 0.05 {
		t.Errorf("the server served %.1f%% of the input tokens, want within 5 points of 60%%", 100*served)
	}
	line := regexp.MustCompile(`prefix cache: asked (\d+\.\d)% of input tokens, server served (\d+\.\d)% \(cached_tokens\)`).FindStringSubmatch(stdout)
	if line == nil {
		t.Fatalf("the summary has no prefix cache line:\n%s", stdout)
	}
	if got, want := line[2], strconv.FormatFloat(100**pt.ServedShare, 'f', 1, 64); got != want {
		t.Errorf("the summary says served %s%%, the result %s%%", got, want)
	}
	t.Logf("%s over %d requests of %d prompt tokens on average", line[0], pt.Requests, pt.PromptTokens/pt.Requests)
}
