package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/llmload/llmload/engine/media"
)

// benchParagraph is ordinary English prose, repeated into a long prompt.
const benchParagraph = "Continuous batching lets an inference server add a request to the running batch at any decode step, " +
	"so the accelerator stays busy while prompts of different lengths come and go. The prefix cache keeps the key and value " +
	"blocks of prompts it has seen, keyed by everything before them, and a new request that starts the same way skips their prefill. "

// benchPrompt is a system prompt and a question of about 2,000 tokens
// (1,972 by cl100k_base and o200k_base; 2,549 by CountTokens, which
// counts English prose high).
func benchPrompt() []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are a precise assistant. Answer in three sentences."},
		{Role: openai.ChatMessageRoleUser, Content: strings.Repeat(benchParagraph, 29) + "What does the prefix cache save?"},
	}
}

// BenchmarkPromptTokens is what a request's prompt costs the simulator:
// validating it, counting its tokens and cutting its prefix-cache blocks.
func BenchmarkPromptTokens(b *testing.B) {
	msgs := benchPrompt()
	for _, name := range []string{"", "cl100k_base", "o200k_base"} {
		cfg := Config{Tokenizer: name}.withDefaults()
		label := name
		if label == "" {
			label = "estimate"
		}
		b.Run(label, func(b *testing.B) {
			p, aerr := readPrompt(&cfg, msgs, false)
			if aerr != nil {
				b.Fatal(aerr)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = readPrompt(&cfg, msgs, false)
			}
			b.ReportMetric(float64(p.tokens), "tokens")
		})
	}
}

// BenchmarkParseChat is what decoding and judging a chat body costs, a
// text one (string content) beside one with a 1024×1024 JPEG: the text
// one must cost what it did before media parts were read.
func BenchmarkParseChat(b *testing.B) {
	cfg := Config{}.withDefaults()
	text, err := json.Marshal(map[string]any{"max_tokens": 64, "messages": benchPrompt()})
	if err != nil {
		b.Fatal(err)
	}
	bodies := map[string][]byte{"text": text}
	if img, err := media.SyntheticImage(media.ImageSpec{Width: 1024, Height: 1024, Format: "jpeg"}, 1, 0); err == nil {
		bodies["image"], _ = json.Marshal(map[string]any{"max_tokens": 64, "messages": []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "text", "text": benchParagraph},
			{"type": "image_url", "image_url": map[string]any{"url": img.DataURL()}}}}}})
	}
	for _, name := range []string{"text", "image"} {
		body, ok := bodies[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			if _, aerr := parseCompletion(&cfg, body); aerr != nil {
				b.Fatal(aerr)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = parseCompletion(&cfg, body)
			}
		})
	}
}
