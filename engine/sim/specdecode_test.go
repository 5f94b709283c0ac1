package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// specRun generates n seeded answers of tokens tokens each on s, one at a
// time, and returns each answer's tokens per chunk.
func specRun(t *testing.T, s *Server, n, tokens int) [][]int {
	t.Helper()
	out := make([][]int, n)
	for i := range n {
		body := chatBody(t, fmt.Sprintf("[req_%d] tell me", i), map[string]any{"max_tokens": tokens, "ignore_eos": true})
		c, aerr := parseCompletion(&s.cfg, []byte(body))
		if aerr != nil {
			t.Fatal(aerr.message)
		}
		err := s.generate(context.Background(), c, func(string) error {
			out[i] = append(out[i], c.chunkTokens)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.lastToken.Sub(c.firstToken); got != time.Duration(len(out[i])-1)*s.cfg.DecodeBase {
			t.Errorf("answer %d: decode %v for %d steps of %v: a verified draft costs one step", i, got, len(out[i])-1, s.cfg.DecodeBase)
		}
	}
	return out
}

// Each decode step drafts K tokens, accepted in order with chance P until
// the first rejected, and sends 1 + accepted as one chunk; the counters
// agree with the chunks, and their ratios with K and P.
func TestSpeculativeDecoding(t *testing.T) {
	tests := []struct {
		k int
		p float64
	}{{1, 0.5}, {3, 0.6}, {4, 0.9}, {2, -1}}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("K=%d,P=%v", tt.k, tt.p), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{SpecTokens: tt.k, SpecAccept: tt.p, PrefillBase: time.Millisecond, PrefillPerToken: -1,
					DecodeBase: 4 * time.Millisecond, DecodePerSeq: -1, PrefillInterference: -1, Seed: 7}
				s := New(cfg)
				p := s.cfg.SpecAccept
				const tokens = 300
				chunks := specRun(t, s, 30, tokens)
				checkChunks(t, chunks, tt.k, tokens)
				checkSpecCounters(t, s.Stats().Spec, chunks, tt.k, p)
				again := specRun(t, New(cfg), 30, tokens)
				if !slices.EqualFunc(chunks, again, slices.Equal) {
					t.Errorf("a second server with the same seed chunked the same requests otherwise")
				}
			})
		})
	}
}

// checkChunks: the prefill's token alone first, then 1 to K+1 tokens a
// step, adding up to the answer.
func checkChunks(t *testing.T, chunks [][]int, k, tokens int) {
	t.Helper()
	for i, cs := range chunks {
		sum := 0
		for j, n := range cs {
			sum += n
			if (j == 0 && n != 1) || n < 1 || n > k+1 {
				t.Errorf("answer %d chunk %d: %d tokens, want 1 first, then 1 to %d", i, j, n, k+1)
			}
		}
		if sum != tokens {
			t.Errorf("answer %d: %d tokens in its chunks, want %d", i, sum, tokens)
		}
	}
}

// checkSpecCounters holds the counters against the chunks and against the
// expectations of K and P within 4.5 standard errors.
func checkSpecCounters(t *testing.T, st SpecStats, chunks [][]int, k int, p float64) {
	t.Helper()
	steps, shown, capped := 0, 0, 0
	sizes := make([]float64, k+2) // steps by tokens sent, but the last of each answer, which may be cut
	for _, cs := range chunks {
		for j, n := range cs[1:] {
			steps++
			shown += n - 1
			if j < len(cs)-2 {
				sizes[n]++
			}
		}
		capped += k
	}
	if st.Drafts != int64(steps) || st.DraftTokens != int64(k*steps) {
		t.Errorf("drafts %d of %d tokens, want %d of %d: one draft of K a decode step", st.Drafts, st.DraftTokens, steps, k*steps)
	}
	if extra := st.Accepted - int64(shown); extra < 0 || extra > int64(capped) {
		t.Errorf("accepted %d, chunks show %d: only the last step of an answer may accept more than it sends", st.Accepted, shown)
	}
	if got := slices.Max(st.AcceptedPerPos); len(st.AcceptedPerPos) != k || got > st.Drafts {
		t.Errorf("accepted per position %v for %d drafts of %d", st.AcceptedPerPos, st.Drafts, k)
	}
	if st.Drafts < 2000 {
		t.Fatalf("only %d drafts: too few for the statistics", st.Drafts)
	}
	n := float64(st.Drafts)
	mean, sq := 0.0, 0.0 // E[a] and E[a²] of the tokens a draft accepts
	for j := 1; j <= k; j++ {
		mean += math.Pow(p, float64(j))
		sq += float64(2*j-1) * math.Pow(p, float64(j))
	}
	within := func(what string, got, want, variance float64) {
		if bound := 4.5*math.Sqrt(variance/n) + 1e-12; math.Abs(got-want) > bound {
			t.Errorf("%s %.4f, want %.4f ± %.4f", what, got, want, bound)
		}
	}
	within("accepted/draft tokens", float64(st.Accepted)/float64(st.DraftTokens), mean/float64(k), (sq-mean*mean)/float64(k*k))
	for i, v := range st.AcceptedPerPos {
		q := math.Pow(p, float64(i+1))
		within(fmt.Sprintf("acceptance at position %d", i), float64(v)/n, q, q*(1-q))
	}
	whole := 0.0
	for _, c := range sizes {
		whole += c
	}
	for a := 0; a <= k; a++ { // P(a accepted) = p^a (1-p), and p^K for all
		q := math.Pow(p, float64(a))
		if a < k {
			q *= 1 - p
		}
		if bound := 4.5*math.Sqrt(q*(1-q)/whole) + 1e-12; math.Abs(sizes[a+1]/whole-q) > bound {
			t.Errorf("chunks of %d tokens: %.4f of the steps, want %.4f ± %.4f", a+1, sizes[a+1]/whole, q, bound)
		}
	}
}

// A stream with speculative decoding sends each step's tokens as one
// event, and /metrics serves vLLM's counters.
func TestSpeculativeStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(zeroCost(Config{SpecTokens: 3, SpecAccept: 0.8}))
		res := streamInProcess(s, chatBody(t, "hello", map[string]any{"max_tokens": 60, "ignore_eos": true, "stream": true}))
		st := s.Stats().Spec
		if got, want := res.contents, int(st.Drafts)+1; got != want {
			t.Errorf("%d content events, want %d: the first token and one a draft", got, want)
		}
		w := serve(s, "GET", "/metrics", "", nil)
		for _, want := range []string{
			fmt.Sprintf(`vllm:spec_decode_num_drafts_total{model_name="%s"} %d`, DefaultModel, st.Drafts),
			fmt.Sprintf(`vllm:spec_decode_num_draft_tokens_total{model_name="%s"} %d`, DefaultModel, st.DraftTokens),
			fmt.Sprintf(`vllm:spec_decode_num_accepted_tokens_total{model_name="%s"} %d`, DefaultModel, st.Accepted),
			fmt.Sprintf(`vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="%s",position="2"} %d`, DefaultModel, st.AcceptedPerPos[2]),
		} {
			if !strings.Contains(w.Body.String(), want+"\n") {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if plain := serve(New(zeroCost(Config{})), "GET", "/metrics", "", nil); strings.Contains(plain.Body.String(), "spec_decode") {
			t.Errorf("/metrics without speculative decoding serves its counters")
		}
	})
}
