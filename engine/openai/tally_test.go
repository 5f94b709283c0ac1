package openai

import (
	"encoding/json"
	"testing"

	"github.com/llmload/llmload/engine"
)

func TestTokenCountUnmarshal(t *testing.T) {
	tests := map[string]struct {
		n  int
		ok bool
	}{
		`12`: {12, true}, `0`: {0, true}, `12.0`: {12, true}, `1.2e1`: {12, true}, ` 5 `: {5, true},
		`2147483647`: {2147483647, true}, `2147483648`: {}, `-1`: {}, `-0.5`: {}, `2.5`: {}, `1e400`: {},
		`"12"`: {}, `null`: {}, `true`: {}, `{}`: {}, `[1]`: {},
	}
	for in, want := range tests {
		var c tokenCount
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Errorf("%s: error %v, want none", in, err)
		}
		if got := (tokenCount{n: want.n, ok: want.ok}); c != got {
			t.Errorf("%s: got %+v, want %+v", in, c, got)
		}
	}
}

// TestChunkUsage decodes chunks through the stream decoder: usage of any
// shape is at worst unknown, and never hides a broken event.
func TestChunkUsage(t *testing.T) {
	known := func(n int) tokenCount { return tokenCount{n, true} }
	tests := []struct {
		data    string
		want    usage
		wantErr bool
	}{
		{data: `{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":2}}}`,
			want: usage{Prompt: known(7), Completion: known(3), Details: usageDetails{known(2)}}},
		{data: `{"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":3,"completion_tokens_details":"none"}}`},
		{data: `{"choices":[],"usage":{"prompt_tokens":"7","completion_tokens":3}}`, want: usage{Completion: known(3)}},
		{data: `{"choices":[],"usage":{"completion_tokens_details":null,"completion_tokens":-3}}`},
		{data: `{"choices":[],"usage":null}`},
		{data: `{"choices":[],"usage":5}`},
		{data: `{"usage":[1],"choices":[{"index":0,"delta":{"content":"a"}}]}`},
		{data: `{"usage":"x","choices":"none"}`, wantErr: true},
		{data: `{"usage":5,"choices":[]} trailing`, wantErr: true},
		{data: `{"choices":[],"usage":{"completion_tokens":12}}`, want: usage{Completion: known(12)}},
	}
	var d chunkDecoder
	var c streamChunk
	for _, tt := range tests {
		err := d.decode([]byte(tt.data), &c)
		if got := err != nil; got != tt.wantErr {
			t.Errorf("%s: error %v, want error: %v", tt.data, err, tt.wantErr)
		}
		if err == nil && c.Usage != tt.want {
			t.Errorf("%s: usage %+v, want %+v", tt.data, c.Usage, tt.want)
		}
	}
}

func TestOutputTokens(t *testing.T) {
	known := func(n int) tokenCount { return tokenCount{n, true} }
	tests := map[string]struct {
		usage          tokenCount
		events, client int // client -1: not counted offline
		bytes          int // -1: unknown
		n              int
		source         string
	}{
		"usage":                           {known(10), 10, 9, 40, 10, engine.TokensFromUsage},
		"usage of multi-token chunks":     {known(40), 10, 38, 160, 40, engine.TokensFromUsage},
		"usage, not counted offline":      {known(10), 10, -1, 40, 10, engine.TokensFromUsage},
		"usage below events":              {known(9), 10, 12, 40, 12, engine.TokensFromTokenizer},
		"usage zero with text":            {known(0), 3, 3, 12, 3, engine.TokensFromTokenizer},
		"usage zero without text":         {known(0), 0, 0, 0, 0, engine.TokensFromUsage},
		"usage without text is plausible": {known(1), 0, 0, 0, 1, engine.TokensFromUsage},
		"absurd usage":                    {known(117), 10, 10, 40, 10, engine.TokensFromTokenizer},
		"highest plausible usage":         {known(116), 10, 10, 40, 116, engine.TokensFromUsage},
		"huge usage, nothing to bound it": {known(1 << 30), 10, -1, -1, 1 << 30, engine.TokensFromUsage},
		"usage beyond the text's bytes":   {known(57), 10, -1, 40, 10, engine.TokensFromEvents},
		"usage up to the text's bytes":    {known(56), 10, -1, 40, 56, engine.TokensFromUsage},
		"unknown usage":                   {tokenCount{}, 10, 12, 40, 12, engine.TokensFromTokenizer},
		"tokenizer below events":          {tokenCount{}, 10, 8, 40, 10, engine.TokensFromEvents},
		"no usage, no tokenizer":          {tokenCount{}, 10, -1, 40, 10, engine.TokensFromEvents},
		"nothing at all":                  {tokenCount{}, 0, -1, 0, 0, engine.TokensFromEvents},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			n, source := outputTokens(tt.usage, tt.events, tt.client, tt.bytes)
			if n != tt.n || source != tt.source {
				t.Errorf("outputTokens = %d (%s), want %d (%s)", n, source, tt.n, tt.source)
			}
		})
	}
}

// TestHiddenReasoning: a reasoning model that streams only its answer
// counts its hidden reasoning in completion_tokens; that usage is sane.
func TestHiddenReasoning(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	answer := "The answer is forty-two."
	tl := &tally{textEvents: 6, content: answer,
		usage: usage{Completion: tokenCount{2006, true}, Details: usageDetails{Reasoning: tokenCount{2000, true}}}}
	var r engine.Result
	c.countTokens(&r, tl, chatReq())
	if r.OutputTokens != 2006 || r.TokensSource != engine.TokensFromUsage || r.ReasoningTokens != 2000 {
		t.Errorf("output %d (%s), reasoning %d; want 2006 from usage, 2000", r.OutputTokens, r.TokensSource, r.ReasoningTokens)
	}
}

// TestTokenizerSampled: with usage in every answer the tokenizer counts
// the first sampleAll requests, then one in sampleEvery.
func TestTokenizerSampled(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	const n = sampleAll + 10*sampleEvery
	for range n {
		tl := &tally{textEvents: 3, content: "one two three", usage: usage{Completion: tokenCount{3, true}}}
		var r engine.Result
		c.countTokens(&r, tl, chatReq())
		if r.OutputTokens != 3 || r.TokensSource != engine.TokensFromUsage {
			t.Fatalf("output %d (%s), want 3 from usage", r.OutputTokens, r.TokensSource)
		}
		if r.ClientOutputTokens > 0 {
			counted++
		}
	}
	if counted != sampleAll+10 {
		t.Errorf("tokenizer counted %d of %d requests, want %d", counted, n, sampleAll+10)
	}
	// Without usage every answer is counted.
	tl := &tally{textEvents: 3, content: "one two three"}
	var r engine.Result
	c.countTokens(&r, tl, chatReq())
	if r.TokensSource != engine.TokensFromTokenizer || r.OutputTokens != 3 {
		t.Errorf("without usage: %d (%s), want 3 from the tokenizer", r.OutputTokens, r.TokensSource)
	}
}
