// Package balance spreads a run's requests across several targets
// (options.targets): in turn, at random (seeded) or by weight, unless a
// request names its target. Client implements engine.Client over the
// targets' own clients and labels every result with the target that
// served it, so that each figure can be read per target.
package balance

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// Target is one endpoint and the client that reaches it.
type Target struct {
	Name   string
	Weight float64 // share of the load under weighted and random; > 0
	// Model is what a request that names no model asks this target for:
	// two deployments of an A/B may serve models of different names.
	Model  string
	Client engine.Client
}

// Client sends each request to one of its targets. Safe for concurrent
// use.
type Client struct {
	targets []Target
	byName  map[string]int
	pick    func() int
}

var _ engine.Client = (*Client)(nil)

// New returns a client spreading requests across targets by policy
// (plan.BalanceRoundRobin, "" too; BalanceRandom, seeded by seed;
// BalanceWeighted). Errors: no targets, two of one name, a weight of zero
// or below, a target without a client, an unknown policy.
func New(policy string, seed int64, targets []Target) (*Client, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("balance: no targets")
	}
	c := &Client{targets: slices.Clone(targets), byName: make(map[string]int, len(targets))}
	for i, t := range targets {
		if _, dup := c.byName[t.Name]; dup {
			return nil, fmt.Errorf("balance: two targets named %q", t.Name)
		}
		if !(t.Weight > 0) {
			return nil, fmt.Errorf("balance: target %q: weight %v must be above 0", t.Name, t.Weight)
		}
		if t.Client == nil {
			return nil, fmt.Errorf("balance: target %q has no client", t.Name)
		}
		c.byName[t.Name] = i
	}
	switch policy {
	case "", plan.BalanceRoundRobin:
		c.pick = roundRobin(len(targets))
	case plan.BalanceRandom:
		c.pick = weightedRandom(seed, weights(targets))
	case plan.BalanceWeighted:
		c.pick = smoothWeighted(weights(targets))
	default:
		return nil, fmt.Errorf("balance: unknown policy %q (want %s, %s or %s)", policy,
			plan.BalanceRoundRobin, plan.BalanceRandom, plan.BalanceWeighted)
	}
	return c, nil
}

// Chat sends req to the target it names, or to the policy's next one. A
// request naming a target the client does not have fails as an invalid
// request: the script was checked for this, so it is a bug, not load.
func (c *Client) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	var i int
	if req.Target == "" {
		i = c.pick()
	} else if n, ok := c.byName[req.Target]; ok {
		i = n
	} else {
		return &engine.Result{API: cmp.Or(req.Endpoint, engine.EndpointChat),
			Err: &engine.Error{Class: engine.ErrInvalidRequest, Message: fmt.Sprintf(
				"no target named %q (targets: %s)", req.Target, strings.Join(c.Names(), ", "))}}
	}
	t := &c.targets[i]
	if req.Model == "" && t.Model != "" {
		r := *req
		r.Model = t.Model
		req = &r
	}
	res := t.Client.Chat(ctx, req)
	if res != nil {
		res.Target = t.Name
	}
	return res
}

// Names lists the targets' names, in order.
func (c *Client) Names() []string {
	out := make([]string, len(c.targets))
	for i, t := range c.targets {
		out[i] = t.Name
	}
	return out
}

func weights(targets []Target) []float64 {
	w := make([]float64, len(targets))
	for i, t := range targets {
		w[i] = t.Weight
	}
	return w
}

// roundRobin takes the targets in turn, weights ignored.
func roundRobin(n int) func() int {
	var next atomic.Uint64
	return func() int { return int((next.Add(1) - 1) % uint64(n)) }
}

// weightedRandom draws a target with probability weight/sum, from a
// source seeded by the run's seed: a run replays its choices when the
// requests come in the same order.
func weightedRandom(seed int64, w []float64) func() int {
	cum := make([]float64, len(w))
	sum := 0.0
	for i, x := range w {
		sum += x
		cum[i] = sum
	}
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(uint64(seed), 0x62616c616e6365)) // "balance"
	return func() int {
		mu.Lock()
		u := r.Float64() * sum
		mu.Unlock()
		i, _ := slices.BinarySearch(cum, u)
		return min(i, len(w)-1)
	}
}

// smoothWeighted is nginx's smooth weighted round robin: over any run of
// sum(w) picks (integer weights) each target gets exactly its weight's
// share, interleaved rather than in blocks, so a short stage still sees
// the asked mix.
func smoothWeighted(w []float64) func() int {
	var mu sync.Mutex
	current := make([]float64, len(w))
	total := 0.0
	for _, x := range w {
		total += x
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		best := 0
		for i := range current {
			current[i] += w[i]
			if current[i] > current[best] {
				best = i
			}
		}
		current[best] -= total
		return best
	}
}
