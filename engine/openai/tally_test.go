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
		events, client int // client -1: no tokenizer
		n              int
		source         string
	}{
		"usage":                           {known(10), 10, 9, 10, engine.TokensFromUsage},
		"usage of multi-token chunks":     {known(40), 10, 38, 40, engine.TokensFromUsage},
		"usage, no tokenizer":             {known(10), 10, -1, 10, engine.TokensFromUsage},
		"usage below events":              {known(9), 10, 12, 12, engine.TokensFromTokenizer},
		"usage zero with text":            {known(0), 3, 3, 3, engine.TokensFromTokenizer},
		"usage zero without text":         {known(0), 0, 0, 0, engine.TokensFromUsage},
		"usage without text is plausible": {known(1), 0, 0, 1, engine.TokensFromUsage},
		"absurd usage":                    {known(117), 10, 10, 10, engine.TokensFromTokenizer},
		"highest plausible usage":         {known(116), 10, 10, 116, engine.TokensFromUsage},
		"huge usage without a tokenizer":  {known(1 << 30), 10, -1, 1 << 30, engine.TokensFromUsage},
		"unknown usage":                   {tokenCount{}, 10, 12, 12, engine.TokensFromTokenizer},
		"tokenizer below events":          {tokenCount{}, 10, 8, 10, engine.TokensFromEvents},
		"no usage, no tokenizer":          {tokenCount{}, 10, -1, 10, engine.TokensFromEvents},
		"nothing at all":                  {tokenCount{}, 0, -1, 0, engine.TokensFromEvents},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			n, source := outputTokens(tt.usage, tt.events, tt.client)
			if n != tt.n || source != tt.source {
				t.Errorf("outputTokens = %d (%s), want %d (%s)", n, source, tt.n, tt.source)
			}
		})
	}
}
