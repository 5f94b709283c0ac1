package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

func embedSample(e2e time.Duration, inputs int) engine.Sample {
	return engine.Sample{Result: engine.Result{API: engine.EndpointEmbeddings, Status: 200, TTFB: e2e, E2E: e2e,
		Inputs: inputs, InputTokens: 10 * inputs, InputTokensSource: engine.TokensFromUsage}}
}

// TestTextEmbeddingsOnly: a stage of embeddings shows E2E and inputs/s,
// and no empty TTFT, TPOT or ITL rows as if they were missing.
func TestTextEmbeddingsOnly(t *testing.T) {
	var samples []engine.Sample
	for range 30 {
		samples = append(samples, embedSample(8*time.Millisecond, 4))
	}
	text, _ := collect(t, plan.SLO{}, samples...)
	assertText(t, text, []string{"inputs/s", "12.0", "E2E", "api: embeddings 30 requests"},
		[]string{"TTFT ", "TPOT", "ITL", "by API"})
}

// TestTextByAPI: a stage that mixes chat and embeddings shows each API's
// latencies apart.
func TestTextByAPI(t *testing.T) {
	var samples []engine.Sample
	for range 10 {
		chat := okSample(100*time.Millisecond, time.Second, nil)
		chat.API = engine.EndpointChat
		samples = append(samples, chat, embedSample(8*time.Millisecond, 2))
	}
	text, r := collect(t, plan.SLO{}, samples...)
	assertText(t, text, []string{"by API (latency ms)", "api: chat 10, embeddings 10 requests", "TTFT", "inputs/s"}, nil)
	table := text[strings.Index(text, "by API"):]
	for _, line := range []string{"chat", "embeddings"} {
		if !strings.Contains(table, line) {
			t.Errorf("by API table lacks %s:\n%s", line, table)
		}
	}
	if got := r.Stages[0].ByAPI[engine.EndpointEmbeddings].E2E.Max; got != 8 {
		t.Errorf("embeddings E2E max = %v, want 8", got)
	}
}

// TestTextChatOnlyUnchanged: without another API nothing new shows.
func TestTextChatOnlyUnchanged(t *testing.T) {
	text, _ := collect(t, plan.SLO{}, okSample(100*time.Millisecond, time.Second, nil))
	assertText(t, text, []string{"TTFT", "TPOT"}, []string{"inputs/s", "api:", "by API"})
}

// TestHTMLByAPI: the HTML report's stage table has inputs/s, and a mixed
// stage's detail breaks its requests down by API.
func TestHTMLByAPI(t *testing.T) {
	var samples []engine.Sample
	for range 30 {
		chat := okSample(100*time.Millisecond, time.Second, nil)
		chat.API = engine.EndpointChat
		samples = append(samples, chat, embedSample(8*time.Millisecond, 2))
	}
	_, r := collect(t, plan.SLO{}, samples...)
	page := string(render(t, HTML(r)))
	for _, want := range []string{"inputs/s", ">embeddings<", "only by API</h4>"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
