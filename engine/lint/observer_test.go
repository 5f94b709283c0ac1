package lint

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

func chat(content string) *engine.ChatRequest {
	return &engine.ChatRequest{Messages: []engine.Message{{Role: "user", Content: content}}, MaxTokens: 50}
}

func iter(scenario, stage string, vu int, i int64) *engine.Iteration {
	return &engine.Iteration{Scenario: scenario, Stage: stage, VUID: vu, Iteration: i}
}

func tallyOf(t *testing.T, o *Observer, scenario, stage string) Tally {
	t.Helper()
	for _, tl := range o.Tallies() {
		if tl.Scenario == scenario && tl.Stage == stage {
			return tl
		}
	}
	t.Fatalf("no tally for %s/%s in %+v", scenario, stage, o.Tallies())
	return Tally{}
}

// TestObserverRepeats: a prompt repeats when another iteration sent it
// first; a conversation's own later turns (same iteration) do not count,
// and a shared start with different tails is a prefix repeat only.
func TestObserverRepeats(t *testing.T) {
	o := NewObserver(0)
	long := strings.Repeat("shared system prompt ", 10) // > PrefixBytes
	o.Observe(iter("s", "a", 1, 0), chat("hello"), "")
	o.Observe(iter("s", "a", 1, 0), chat("hello"), "")     // same iteration: not a repeat
	o.Observe(iter("s", "a", 2, 0), chat("hello"), "")     // another VU: a repeat
	o.Observe(iter("s", "a", 1, 1), chat(long+"one"), "")  // new
	o.Observe(iter("s", "a", 1, 2), chat(long+"two"), "")  // prefix repeats, prompt does not
	o.Observe(iter("other", "a", 1, 3), chat("hello"), "") // another scenario's requests are its own
	got := tallyOf(t, o, "s", "a")
	if got.Requests != 5 || got.PrefixRepeats != 2 || got.PromptRepeats != 1 {
		t.Errorf("tally = %+v, want 5 requests, 2 prefix and 1 prompt repeats", got)
	}
	if other := tallyOf(t, o, "other", "a"); other.PrefixRepeats != 0 {
		t.Errorf("other scenario = %+v, want no repeat", other)
	}
}

// TestObserverLeavesOut: warmup iterations, dirty requests, embeddings,
// raw bodies and lifecycle requests (no iteration) are not judged.
func TestObserverLeavesOut(t *testing.T) {
	o := NewObserver(0)
	warm := iter("s", "warmup", 1, 0)
	warm.Warmup = true
	o.Observe(warm, chat("x"), "")
	o.Observe(iter("s", "a", 1, 0), chat("x"), "empty")
	o.Observe(iter("s", "a", 1, 0), &engine.ChatRequest{Endpoint: engine.EndpointEmbeddings, Inputs: []string{"x"}}, "")
	o.Observe(iter("s", "a", 1, 0), &engine.ChatRequest{Raw: []byte("{")}, "")
	o.Observe(nil, chat("x"), "")
	if ts := o.Tallies(); len(ts) != 0 {
		t.Errorf("tallies = %+v, want none", ts)
	}
}

func TestObserverLimitPerStage(t *testing.T) {
	o := NewObserver(3)
	for i := range 10 {
		o.Observe(iter("s", "a", 1, int64(i)), chat("same"), "")
		o.Observe(iter("s", "b", 1, int64(100+i)), chat(fmt.Sprint(i)), "")
	}
	if a, b := tallyOf(t, o, "s", "a"), tallyOf(t, o, "s", "b"); a.Requests != 3 || a.PrefixRepeats != 2 || b.Requests != 3 {
		t.Errorf("a = %+v, b = %+v: want 3 requests each, a with 2 repeats", a, b)
	}
}

func TestObserverFlags(t *testing.T) {
	zero, seed, other := 0.0, int64(7), int64(8)
	tests := []struct {
		name string
		reqs []*engine.ChatRequest
		want Tally
	}{
		{"temperature 0", []*engine.ChatRequest{{Temperature: &zero, MaxTokens: 5}, {Temperature: &zero, MaxTokens: 5}},
			Tally{Requests: 2, Temperature0: 2, MaxTokens: 10}},
		{"temperature 0 in extra", []*engine.ChatRequest{{Extra: map[string]any{"temperature": 0.0, "max_completion_tokens": 9.0}}},
			Tally{Requests: 1, Temperature0: 1, MaxTokens: 9}},
		{"one seed", []*engine.ChatRequest{{Seed: &seed}, {Seed: &seed}},
			Tally{Requests: 2, Seeded: 2, Seeds: 1, Seed: 7, NoMaxTokens: 2}},
		{"two seeds", []*engine.ChatRequest{{Seed: &seed}, {Extra: map[string]any{"seed": float64(other)}}},
			Tally{Requests: 2, Seeded: 2, Seeds: 2, Seed: 7, NoMaxTokens: 2}},
		{"responses max_output_tokens", []*engine.ChatRequest{{Endpoint: engine.EndpointResponses, MaxTokens: 64}},
			Tally{Requests: 1, MaxTokens: 64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewObserver(0)
			for i, r := range tt.reqs {
				r.Prompt = fmt.Sprint("prompt ", i)
				o.Observe(iter("s", "a", 1, int64(i)), r, "")
			}
			got := tallyOf(t, o, "s", "a")
			got.Scenario, got.Stage = "", ""
			if got != tt.want {
				t.Errorf("tally = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestObserverConcurrent: many VUs at once (run with -race); every
// request is counted once, up to the limit.
func TestObserverConcurrent(t *testing.T) {
	o := NewObserver(150)
	var wg sync.WaitGroup
	for vu := 1; vu <= 8; vu++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				o.Observe(iter("s", "a", vu, int64(i)), chat(fmt.Sprintf("[req_%d_%d] hi", vu, i)), "")
			}
		}()
	}
	wg.Wait()
	if got := tallyOf(t, o, "s", "a"); got.Requests != 150 || got.PrefixRepeats != 0 {
		t.Errorf("tally = %+v, want 150 requests without repeats", got)
	}
}

// BenchmarkObserve is the observer's cost per request inside a VU's
// iteration: while a stage's first requests are kept (a 2,000-byte chat
// prompt hashed once, its flags counted) and after (a lock and a lookup).
func BenchmarkObserve(b *testing.B) {
	prompt := strings.Repeat("Explain how a B-tree index speeds up queries. ", 44)
	b.Run("kept", func(b *testing.B) {
		o := NewObserver(b.N + 1)
		reqs := make([]*engine.ChatRequest, 1024)
		for i := range reqs {
			reqs[i] = chat(fmt.Sprintf("[req_%d] %s", i, prompt))
		}
		it := iter("sweep", "c8", 1, 0)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			it.Iteration = int64(i)
			o.Observe(it, reqs[i%len(reqs)], "")
		}
	})
	b.Run("past the limit", func(b *testing.B) {
		o := NewObserver(1)
		req, it := chat(prompt), iter("sweep", "c8", 1, 0)
		o.Observe(it, req, "")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			o.Observe(it, req, "")
		}
	})
}

// TestObserverParts: a message of parts is its text parts and its media,
// an item by its name; speech requests are not judged.
func TestObserverParts(t *testing.T) {
	img, err := media.SyntheticImage(media.ImageSpec{Width: 8, Height: 8}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := media.SyntheticImage(media.ImageSpec{Width: 8, Height: 8}, 1, 1)
	parts := func(text string, it *media.Item) *engine.ChatRequest {
		return &engine.ChatRequest{MaxTokens: 8, Messages: []engine.Message{{Role: "user",
			Parts: []engine.Part{{Type: engine.PartText, Text: text}, {Type: engine.PartImage, Media: it}}}}}
	}
	o := NewObserver(0)
	o.Observe(iter("s", "a", 1, 0), parts("[req_1] what is this?", img), "")
	o.Observe(iter("s", "a", 1, 1), parts("[req_2] what is this?", img), "")   // new text: new
	o.Observe(iter("s", "a", 1, 2), parts("[req_1] what is this?", other), "") // another image: new prompt
	o.Observe(iter("s", "a", 1, 3), parts("[req_1] what is this?", img), "")   // all again: a repeat
	o.Observe(iter("s", "a", 1, 4), &engine.ChatRequest{Endpoint: engine.EndpointSpeech, Prompt: "hi"}, "")
	o.Observe(iter("s", "a", 1, 5), &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions}, "")
	got := tallyOf(t, o, "s", "a")
	if got.Requests != 4 || got.PromptRepeats != 1 || got.NoMaxTokens != 0 {
		t.Errorf("tally = %+v, want 4 requests, 1 prompt repeat, none without max_tokens", got)
	}
}
