package metrics

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestByAPI: a stage that sends another API besides chat is broken down
// by endpoint, so an embedding's E2E stays apart from a chat answer's;
// inputs, their rate and tool calls are counted; a chat-only stage has no
// breakdown, as before.
func TestByAPI(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "mixed", 0, 1, 0))
	c.StageStarted(mark("sweep", "chat", 1, 1, 0))
	chat := okSample("mixed", 1, time.Second)
	chat.API, chat.ToolCalls = engine.EndpointChat, make([]engine.ToolCall, 2)
	c.Sample(chat)
	for i := range 3 {
		e := engine.Sample{Scenario: "sweep", Stage: "mixed", Result: engine.Result{API: engine.EndpointEmbeddings,
			Start: at(2 + float64(i)), Status: 200, TTFB: 9 * time.Millisecond, E2E: 10 * time.Millisecond, Inputs: 4, InputTokens: 20,
			InputTokensSource: engine.TokensFromUsage}}
		c.Sample(e)
	}
	failed := failSample("mixed", 3, "http_4xx:404")
	failed.API = engine.EndpointEmbeddings
	c.Sample(failed)
	c.Sample(okSample("chat", 1, time.Second)) // API unset: a chat client's
	c.StageEnded(mark("sweep", "mixed", 0, 1, 10))
	c.StageEnded(mark("sweep", "chat", 1, 1, 10))
	sum := c.Close()
	mixed := findStage(t, sum, "mixed")
	e := mixed.ByAPI[engine.EndpointEmbeddings]
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"apis", float64(len(mixed.ByAPI)), 2},
		{"chat requests", float64(mixed.ByAPI[engine.EndpointChat].Requests), 1},
		{"embeddings requests", float64(e.Requests), 4},
		{"embeddings failed", float64(e.Failed), 1},
		{"embeddings E2E max", e.E2E.Max, 10},
		{"embeddings TTFT count", float64(e.TTFT.Count), 0},
		{"inputs", float64(mixed.Inputs), 12},
		{"inputs/s", mixed.InputsPerSec, 1.2},
		{"tool calls", float64(mixed.ToolCalls), 2},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if st := findStage(t, sum, "chat"); st.ByAPI != nil || st.Inputs != 0 {
		t.Errorf("chat-only stage: ByAPI %v, inputs %d; want none", st.ByAPI, st.Inputs)
	}
}
