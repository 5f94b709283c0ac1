package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/tokenize"
)

func TestMockFlagErrors(t *testing.T) {
	runExitCases(t, []exitCase{
		{"mock unknown tokenizer", []string{"mock", "--addr", "127.0.0.1:0", "--tokenizer", "cl100k"}, exitUsage, "--tokenizer cl100k"},
		{"mock missing tokenizer.json", []string{"mock", "--addr", "127.0.0.1:0", "--tokenizer", "/nonexistent/tokenizer.json"}, exitUsage,
			"--tokenizer /nonexistent/tokenizer.json"},
		{"mock prompts without a truth log", []string{"mock", "--addr", "127.0.0.1:0", "--truth-log-prompts"}, exitUsage,
			"--truth-log-prompts needs --truth-log"},
		{"mock help names the tokenizers", []string{"mock", "--help"}, exitOK, "o200k_base"},
		{"mock unknown image formula", []string{"mock", "--addr", "127.0.0.1:0", "--image-tokens", "clip"}, exitUsage,
			"--image-tokens clip: not a formula; expected qwen2vl, patch14, llava"},
		{"mock no images", []string{"mock", "--addr", "127.0.0.1:0", "--max-images", "0"}, exitUsage, "--max-images 0: at least 1"},
		{"mock negative image bytes", []string{"mock", "--addr", "127.0.0.1:0", "--max-image-bytes", "-5"}, exitUsage, "--max-image-bytes -5: at least 1"},
		{"mock zero speech rtf", []string{"mock", "--addr", "127.0.0.1:0", "--speech-rtf", "0"}, exitUsage, "--speech-rtf 0: a positive number"},
		{"mock speech rtf not a number", []string{"mock", "--addr", "127.0.0.1:0", "--speech-rtf", "fast"}, exitUsage, "speech-rtf"},
		{"mock help names the media flags", []string{"mock", "--help"}, exitOK, "--image-tokens"},
		{"mock help names the formulas", []string{"mock", "--help"}, exitOK, "patch14"},
	})
}

// question counts differently by each tokenizer and by the estimate.
const question = "什么是机器学习？ Explain KV caches, briefly: two lines."

// The mock counts prompt tokens with --tokenizer, its prefix cache hits
// whole blocks of them, and --truth-log-prompts logs the prompts.
func TestE2EMockTokenizerAndTruthPrompts(t *testing.T) {
	truth := filepath.Join(t.TempDir(), "truth.jsonl")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--tokenizer", "cl100k_base", "--truth-log", truth, "--truth-log-prompts",
		"--prefill-base", "-1ns", "--prefill-per-token", "-1ns", "--decode-base", "-1ns", "--decode-per-seq", "-1ns")
	url := mock.mockURL(t)
	base := url
	codec, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	shared := strings.Repeat(" alpha", 100) // 100 tokens
	prompts := []string{shared + " first " + question, shared + " second " + question}
	wantCached := []int{0, (3 + 100) / sim.BlockTokens * sim.BlockTokens} // 3 template tokens before the text
	for i, p := range prompts {
		prompt, cached := postChat(t, base, p)
		if want := codec.Count(p) + 7; prompt != want || cached != wantCached[i] {
			t.Errorf("prompt %d: usage says %d prompt tokens, %d cached; want %d, %d", i+1, prompt, cached, want, wantCached[i])
		}
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	recs := readTruth(t, truth)
	if len(recs) != 2 {
		t.Fatalf("%d truth records, want 2", len(recs))
	}
	for i, r := range recs {
		if r.Prompt != prompts[i] || r.MaxTokens != 2 || r.PromptTokens != codec.Count(prompts[i])+7 || r.CachedTokens != wantCached[i] {
			t.Errorf("truth record %d: prompt %.20q..., max_tokens %d, %d prompt tokens, %d cached", i+1, r.Prompt, r.MaxTokens, r.PromptTokens, r.CachedTokens)
		}
	}
}

// postChat sends a chat request and returns its usage's prompt and cached tokens.
func postChat(t *testing.T, base, content string) (prompt, cached int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"max_tokens": 2, "messages": []map[string]string{{"role": "user", "content": content}}})
	resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			PromptTokens  int `json:"prompt_tokens"`
			PromptDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	return out.Usage.PromptTokens, out.Usage.PromptDetails.CachedTokens
}

// A run without a target counts prompt tokens with the scenario's
// tokenizer: the built-in simulator uses options.target.tokenizer.
func TestRunWithoutTargetCountsWithTheScenarioTokenizer(t *testing.T) {
	count := func(name string) int {
		c, err := tokenize.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return c.Count(question)
	}
	tests := []struct {
		option string // options.target.tokenizer, "" for none
		want   int
	}{
		{"", count("cl100k_base") + 7},
		{"o200k_base", count("o200k_base") + 7},
		{"none", sim.CountTokens(question) + 7},
	}
	for _, tt := range tests {
		target := ""
		if tt.option != "" {
			target = fmt.Sprintf("target = { tokenizer = %q },", tt.option)
		}
		script := writeScript(t, fmt.Sprintf(`
local llm = require("llmload")
options = { %s scenarios = { once = { executor = "shared-iterations", vus = 1, iterations = 2, exec = "chat" } } }
function chat(vu)
  llm.chat { messages = { { role = "user", content = %q } }, max_tokens = 3 }
end
`, target, question))
		requests := filepath.Join(t.TempDir(), "requests.csv")
		if _, stderr, code := runInProcess(t, "run", "-q", "--csv", requests, script); code != exitOK {
			t.Fatalf("tokenizer %q: exit %d\n%s", tt.option, code, stderr)
		}
		for _, n := range csvColumn(t, requests, "input_tokens") {
			if n != strconv.Itoa(tt.want) {
				t.Errorf("tokenizer %q: input_tokens %s, want %d", tt.option, n, tt.want)
			}
		}
	}
}

// csvColumn returns a column of a CSV file with a header row.
func csvColumn(t *testing.T, path, name string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %d rows, %v", path, len(rows), err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == name {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s: no column %s in %v", path, name, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[col])
	}
	return out
}

// The media flags reach the simulator: --image-tokens picks the formula
// usage counts an image by, --max-images refuses one image too many.
func TestE2EMockMediaFlags(t *testing.T) {
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--image-tokens", "llava", "--max-images", "1",
		"--prefill-base", "-1ns", "--prefill-per-token", "-1ns", "--decode-base", "-1ns", "--decode-per-seq", "-1ns")
	url := mock.mockURL(t)
	base := url
	image := map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}
	post := func(images int) (int, map[string]any) {
		parts := []map[string]any{{"type": "text", "text": "Describe."}}
		for range images {
			parts = append(parts, image)
		}
		body, _ := json.Marshal(map[string]any{"max_tokens": 1, "messages": []map[string]any{{"role": "user", "content": parts}}})
		resp, err := http.Post(base+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	tokens := func(out map[string]any) float64 {
		u, _ := out["usage"].(map[string]any)
		n, _ := u["prompt_tokens"].(float64)
		return n
	}
	_, text := post(0)
	status, one := post(1)
	if status != http.StatusOK || tokens(one)-tokens(text) != 576 {
		t.Errorf("one image: status %d, %v prompt tokens against %v without: want 576 more", status, tokens(one), tokens(text))
	}
	if status, two := post(2); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(two), "at most 1 images per request") {
		t.Errorf("two images: status %d, %v; want 400 at most 1 images per request", status, two)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
}
