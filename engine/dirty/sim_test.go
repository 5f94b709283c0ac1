package dirty_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dirty"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/sim"
)

// TestEveryKindAgainstTheSimulator sends every kind, built by Apply and
// sent by the real client, to the built-in simulator twice: answering
// carefully (each kind gets the answer its documentation promises) and told
// to fail every kind with a 500 (each is judged a defect, which also proves
// the simulator recognises every kind).
func TestEveryKindAgainstTheSimulator(t *testing.T) {
	all := map[string]string{}
	for _, k := range dirty.Names() {
		all[k] = "500"
	}
	for _, mode := range []struct {
		name    string
		defects map[string]string
	}{{"careful", nil}, {"defective", all}} {
		t.Run(mode.name, func(t *testing.T) {
			srv := httptest.NewServer(sim.New(sim.Config{Defects: mode.defects, PrefillBase: -1, DecodeBase: -1}))
			defer srv.Close()
			client, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Tokenizer: openai.TokenizerNone, TTFTTimeout: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for shape, base := range shapes {
				for _, k := range dirty.Kinds() {
					req := base()
					if err := dirty.Apply(k.Name, req, rand.New(rand.NewPCG(1, 2))); errors.Is(err, dirty.ErrNotForAPI) {
						continue
					} else if err != nil {
						t.Fatalf("%s %s: %v", shape, k.Name, err)
					}
					// An oversize image is 27 MB of JSON for the simulator to
					// decode: seconds under the race detector on a busy machine.
					ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
					res := client.Chat(ctx, req)
					cancel()
					got := engine.Verdict(res)
					want := careful(k)
					if mode.defects != nil {
						want = engine.VerdictDefect
					}
					if got != want {
						t.Errorf("%s %s: verdict %s (status %d, %v), want %s (healthy: %s)", shape, k.Name, got, res.Status, res.Err, want, k.Healthy)
					}
				}
			}
		})
	}
}

// shapes are the requests every kind malforms: chat, and the APIs that
// carry the same prompt in their own shapes.
var shapes = map[string]func() *engine.ChatRequest{
	"chat": func() *engine.ChatRequest {
		return &engine.ChatRequest{Model: sim.DefaultModel, MaxTokens: 4, Messages: []engine.Message{{Role: "user", Content: "hello there"}}}
	},
	"responses, string input": func() *engine.ChatRequest {
		return &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: sim.DefaultModel, MaxTokens: 4, Prompt: "hello there"}
	},
	"responses, messages": func() *engine.ChatRequest {
		return &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: sim.DefaultModel, MaxTokens: 4, System: "Be brief.",
			Messages: []engine.Message{{Role: "user", Content: "hello there"}}}
	},
	"messages": func() *engine.ChatRequest {
		return &engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: sim.DefaultModel, MaxTokens: 4, System: "Be brief.",
			Messages: []engine.Message{{Role: "user", Content: "hello there"}}}
	},
}

func TestEmbeddingsHaveNoKinds(t *testing.T) {
	err := dirty.Apply("empty", &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Prompt: "x"}, nil)
	if !errors.Is(err, dirty.ErrNoEmbeddings) {
		t.Errorf("Apply = %v, want ErrNoEmbeddings", err)
	}
}

// careful is the verdict a careful server earns: accepted for the kinds
// documented as answered with 200, handled for the rest.
func careful(k dirty.Kind) string {
	if strings.HasPrefix(k.Healthy, "200") {
		return engine.VerdictAccepted
	}
	return engine.VerdictHandled
}
