package balance

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// counting is a target's client that counts what it was sent.
type counting struct {
	mu     sync.Mutex
	n      int
	models []string
}

func (c *counting) Chat(_ context.Context, req *engine.ChatRequest) *engine.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.models = append(c.models, req.Model)
	return &engine.Result{Status: 200}
}

func three(w [3]float64) ([]Target, []*counting) {
	cs := []*counting{{}, {}, {}}
	ts := make([]Target, 3)
	for i, name := range []string{"a", "b", "c"} {
		ts[i] = Target{Name: name, Weight: w[i], Client: cs[i]}
	}
	return ts, cs
}

// TestSpread: round robin and weighted give each target exactly its
// share; random stays within binomial bounds of its weight.
func TestSpread(t *testing.T) {
	const n = 6000
	for _, tc := range []struct {
		policy  string
		weights [3]float64
		exact   bool
	}{
		{plan.BalanceRoundRobin, [3]float64{1, 5, 1}, true}, // weights ignored
		{"", [3]float64{1, 1, 1}, true},
		{plan.BalanceWeighted, [3]float64{1, 2, 3}, true},
		{plan.BalanceWeighted, [3]float64{0.5, 0.25, 0.25}, true},
		{plan.BalanceRandom, [3]float64{1, 1, 1}, false},
		{plan.BalanceRandom, [3]float64{1, 2, 7}, false},
	} {
		ts, cs := three(tc.weights)
		c, err := New(tc.policy, 42, ts)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if res := c.Chat(context.Background(), &engine.ChatRequest{}); res.Target == "" {
				t.Fatalf("%s: result names no target", tc.policy)
			}
		}
		sum := tc.weights[0] + tc.weights[1] + tc.weights[2]
		for i, cl := range cs {
			p := tc.weights[i] / sum
			if tc.policy == plan.BalanceRoundRobin || tc.policy == "" {
				p = 1.0 / 3
			}
			want := p * n
			if tc.exact {
				if math.Abs(float64(cl.n)-want) > 1 {
					t.Errorf("%s %v: target %d got %d, want exactly %.0f", tc.policy, tc.weights, i, cl.n, want)
				}
				continue
			}
			// Four standard deviations: a false alarm once in ~16,000 runs,
			// and with the fixed seed, never.
			sd := math.Sqrt(n * p * (1 - p))
			if math.Abs(float64(cl.n)-want) > 4*sd {
				t.Errorf("%s %v: target %d got %d, want %.0f ± %.0f", tc.policy, tc.weights, i, cl.n, want, 4*sd)
			}
		}
	}
}

// TestInterleaved: smooth weighted round robin spreads a heavy target's
// picks rather than sending them in a block.
func TestInterleaved(t *testing.T) {
	ts, _ := three([3]float64{5, 1, 1})
	c, _ := New(plan.BalanceWeighted, 0, ts)
	var seq strings.Builder
	for range 7 {
		seq.WriteString(c.Chat(context.Background(), &engine.ChatRequest{}).Target)
	}
	if got := seq.String(); strings.Contains(got, "aaaa") || strings.Count(got, "a") != 5 {
		t.Errorf("7 picks of weights 5,1,1 = %s: want five a's, never four in a row", got)
	}
}

// TestNamed: a request naming its target goes there and leaves the
// rotation alone; an unknown name fails as an invalid request; a request
// without a model gets its target's.
func TestNamed(t *testing.T) {
	ts, cs := three([3]float64{1, 1, 1})
	ts[1].Model = "model-b"
	c, _ := New("", 0, ts)
	for range 3 {
		if got := c.Chat(context.Background(), &engine.ChatRequest{Target: "c"}).Target; got != "c" {
			t.Fatalf("named c, served by %q", got)
		}
	}
	if got := c.Chat(context.Background(), &engine.ChatRequest{}).Target; got != "a" {
		t.Errorf("first unnamed request after named ones went to %q, want a", got)
	}
	c.Chat(context.Background(), &engine.ChatRequest{})
	c.Chat(context.Background(), &engine.ChatRequest{Target: "b", Model: "explicit"})
	if got := cs[1].models; len(got) != 2 || got[0] != "model-b" || got[1] != "explicit" {
		t.Errorf("b was asked for models %q, want [model-b explicit]", got)
	}
	res := c.Chat(context.Background(), &engine.ChatRequest{Target: "z"})
	if res.Err == nil || res.Err.Class != engine.ErrInvalidRequest || !strings.Contains(res.Err.Message, "a, b, c") {
		t.Errorf("unknown target: %+v, want an invalid_request naming the targets", res.Err)
	}
}

func TestNewErrors(t *testing.T) {
	ok := &counting{}
	for _, tc := range []struct {
		name    string
		policy  string
		targets []Target
		want    string
	}{
		{"none", "", nil, "no targets"},
		{"duplicate", "", []Target{{Name: "a", Weight: 1, Client: ok}, {Name: "a", Weight: 1, Client: ok}}, `two targets named "a"`},
		{"zero weight", "", []Target{{Name: "a", Weight: 0, Client: ok}}, "weight 0"},
		{"negative weight", plan.BalanceWeighted, []Target{{Name: "a", Weight: -1, Client: ok}}, "weight -1"},
		{"NaN weight", plan.BalanceWeighted, []Target{{Name: "a", Weight: math.NaN(), Client: ok}}, "weight NaN"},
		{"no client", "", []Target{{Name: "a", Weight: 1}}, "no client"},
		{"policy", "least_busy", []Target{{Name: "a", Weight: 1, Client: ok}}, `unknown policy "least_busy"`},
	} {
		if _, err := New(tc.policy, 0, tc.targets); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
