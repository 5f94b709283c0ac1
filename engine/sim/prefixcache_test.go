package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sashabaranov/go-openai"
)

func userMessages(texts ...string) []openai.ChatCompletionMessage {
	msgs := make([]openai.ChatCompletionMessage, len(texts))
	for i, t := range texts {
		msgs[i] = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t}
	}
	return msgs
}

func TestPrefixCacheAdmit(t *testing.T) {
	p := newPrefixCache(4 * BlockTokens)
	tests := []struct {
		hashes []uint64
		want   int // cached tokens
	}{
		{[]uint64{1, 2, 3}, 0},
		{[]uint64{1, 2, 3}, 3 * BlockTokens},
		{[]uint64{1, 2, 9}, 2 * BlockTokens},
		{[]uint64{5, 6}, 0}, // evicts the least recent: 9 and 3, the tails
		{[]uint64{1, 2, 3}, 2 * BlockTokens},
		{[]uint64{7, 2, 3}, 0}, // a hit after a miss does not count: the chain is broken
		{[]uint64{1}, BlockTokens},
		{nil, 0},
	}
	for i, tt := range tests {
		if got := p.admit(tt.hashes); got != tt.want {
			t.Errorf("step %d: admit(%v) = %d, want %d", i, tt.hashes, got, tt.want)
		}
		if got := p.lru.Len(); got > 4 || got != len(p.blocks) {
			t.Errorf("step %d: %d blocks in the list, %d in the map, capacity 4", i, got, len(p.blocks))
		}
	}
	var disabled *prefixCache = newPrefixCache(-1)
	if disabled != nil {
		t.Fatal("newPrefixCache(-1) is not nil")
	}
	if got := disabled.admit([]uint64{1}); got != 0 {
		t.Errorf("a disabled cache hit %d tokens", got)
	}
}

func TestBlockHashes(t *testing.T) {
	shared := strings.Repeat("shared context ", 100) // 375 tokens
	a := blockHashes(userMessages(shared + "question one"))
	b := blockHashes(userMessages(shared + "another question entirely"))
	c := blockHashes(userMessages("[req_7] " + shared + "question one"))
	prompt, _ := promptTokens(userMessages(shared + "question one"))
	if got, want := len(a), (prompt-replyPrimer)/BlockTokens; got != want {
		t.Errorf("%d blocks for %d prompt tokens, want %d", got, prompt, want)
	}
	common := 0
	for common < min(len(a), len(b)) && a[common] == b[common] {
		common++
	}
	if got, want := common, (messageOverhead+375)/BlockTokens; got != want {
		t.Errorf("prompts sharing 375 tokens share %d blocks, want %d", got, want)
	}
	if a[0] == c[0] {
		t.Error("a unique start shares the first block")
	}
	if got := blockHashes(userMessages("short")); len(got) != 0 {
		t.Errorf("a prompt shorter than a block has %d blocks", len(got))
	}
	// Text is counted as CountTokens counts it, whatever the script.
	for _, text := range []string{strings.Repeat("什么是机器学习", 50), strings.Repeat("é😀\xff", 99)} {
		prompt, _ := promptTokens(userMessages(text))
		if got, want := len(blockHashes(userMessages(text))), (prompt-replyPrimer)/BlockTokens; got != want {
			t.Errorf("%.20q...: %d blocks, want %d", text, got, want)
		}
	}
}

func TestUsageReportsCachedTokens(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	body := chatBody(t, strings.Repeat("the same long prompt ", 50), map[string]any{"max_tokens": 2})
	var cached []int
	for range 2 {
		var resp openai.ChatCompletionResponse
		if err := json.Unmarshal(serve(s, "POST", "/v1/chat/completions", body, nil).Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		n := 0
		if d := resp.Usage.PromptTokensDetails; d != nil {
			n = d.CachedTokens
		}
		if n >= resp.Usage.PromptTokens {
			t.Errorf("cached %d of %d prompt tokens", n, resp.Usage.PromptTokens)
		}
		cached = append(cached, n)
	}
	if cached[0] != 0 || cached[1] == 0 || cached[1]%BlockTokens != 0 {
		t.Errorf("cached tokens of two equal requests = %v, want 0 then whole blocks", cached)
	}
	if got, want := s.Stats().CachedTokens, int64(cached[1]); got != want {
		t.Errorf("Stats().CachedTokens = %d, want %d", got, want)
	}

	off := New(zeroCost(Config{PrefixCacheTokens: -1}))
	defer off.Close()
	for range 2 {
		serve(off, "POST", "/v1/chat/completions", body, nil)
	}
	if got := off.Stats().CachedTokens; got != 0 {
		t.Errorf("with the cache disabled, Stats().CachedTokens = %d", got)
	}
}

// meanTTFT streams prompts one after another and averages their TTFT.
func meanTTFT(t *testing.T, s *Server, prompts []string) time.Duration {
	t.Helper()
	var sum time.Duration
	for _, p := range prompts {
		sum += streamInProcess(s, chatBody(t, p, map[string]any{"max_tokens": 1, "stream": true})).ttft
	}
	return sum / time.Duration(len(prompts))
}

// A shared 1,000-token prefix is prefilled once; a unique start defeats it.
// On a fake clock the simulated prefill times come out exact.
func TestSharedPrefixLowersTTFT(t *testing.T) {
	cfg := Config{PrefillBase: time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodeBase: -1}
	shared := strings.Repeat("abcd", 1000) // 1,000 tokens
	prompts := func(unique bool) []string {
		var ps []string
		for i := range 8 {
			if unique {
				ps = append(ps, fmt.Sprintf("[req_%d] %s question %d", i, shared, i))
			} else {
				ps = append(ps, fmt.Sprintf("%s [req_%d] question %d", shared, i, i))
			}
		}
		return ps
	}
	synctest.Test(t, func(t *testing.T) {
		warm := New(cfg)
		defer warm.Close()
		meanTTFT(t, warm, prompts(false)[:1]) // fills the cache
		hit := meanTTFT(t, warm, prompts(false)[1:])
		cold := New(cfg)
		defer cold.Close()
		miss := meanTTFT(t, cold, prompts(true))
		t.Logf("mean TTFT with a shared 1,000-token prefix %v, with a unique start %v", hit, miss)
		if hit*2 > miss { // ~2 ms against ~102 ms
			t.Errorf("mean TTFT with a shared prefix %v is not under half of %v without", hit, miss)
		}
	})
}
