package lint

import (
	"hash/maphash"
	"sync"

	"github.com/llmload/llmload/engine"
)

// PrefixBytes is how much of a prompt's start the repeated-prefix rule
// compares: 128 bytes of the prompt as sent (system prompt, then each
// message's role and text), about 32 tokens of English text at four bytes
// a token — a prefix cache's first two blocks of 16 tokens.
const PrefixBytes = 128

// DefaultObserved is how many requests of each stage an Observer keeps:
// enough to tell a share of 20% from noise, few enough that the memory it
// holds is bounded by the plan, not by the run's length.
const DefaultObserved = 200

// Tally is what the request rules know of one stage's first requests:
// clean generation requests only (warmup, dirty-data and embeddings
// requests are not judged).
type Tally struct {
	Scenario string
	Stage    string
	// Requests counts the requests observed, at most the Observer's limit.
	Requests int
	// NoMaxTokens counts those that set no max_tokens; MaxTokens sums the
	// max_tokens of the others.
	NoMaxTokens int
	MaxTokens   int64
	// PrefixRepeats counts requests whose first PrefixBytes equal those of
	// a request of another iteration, earlier in the scenario;
	// PromptRepeats those whose whole prompt does. A conversation's later
	// turns share its first turn's start, which is what a chat client
	// sends: repeats within one iteration are not counted.
	PrefixRepeats int
	PromptRepeats int
	// AskedRepeats are the PrefixRepeats whose prompts were built to
	// repeat a shared prefix (engine.PrefixAsked): hits asked for.
	AskedRepeats int
	// Temperature0 counts requests sent with temperature 0.
	Temperature0 int
	// Seeded counts requests sent with a seed; Seeds is how many distinct
	// seeds they had, counted up to 2; Seed is the first.
	Seeded int
	Seeds  int
	Seed   int64
}

// add folds u, a tally of the same scenario, into t.
func (t *Tally) add(u Tally) {
	t.Requests += u.Requests
	t.NoMaxTokens += u.NoMaxTokens
	t.MaxTokens += u.MaxTokens
	t.PrefixRepeats += u.PrefixRepeats
	t.AskedRepeats += u.AskedRepeats
	t.PromptRepeats += u.PromptRepeats
	t.Temperature0 += u.Temperature0
	switch {
	case u.Seeded == 0:
	case t.Seeded == 0:
		t.Seeds, t.Seed = u.Seeds, u.Seed
	case u.Seed != t.Seed || u.Seeds > 1:
		t.Seeds = 2
	}
	t.Seeded += u.Seeded
}

// Observer keeps what the request rules need of the first requests of
// each stage: per request a few flags and two 64-bit hashes, never the
// prompt, and nothing past the first limit requests of a stage. It is
// safe for concurrent use; its cost per request is two short critical
// sections and, for the first requests of a stage, one pass of a hash
// over the prompt (see BenchmarkObserve).
type Observer struct {
	limit  int
	seed   maphash.Seed
	mu     sync.Mutex
	stages map[stageKey]*Tally
	order  []*Tally
	seen   map[string]*seenSet // scenario → what its requests started with
}

type stageKey struct{ scenario, stage string }

// iterKey names one iteration of a run: VU ids are unique in a run, and
// iterations count per VU.
type iterKey struct {
	vu int
	it int64
}

// seenSet is a scenario's prompt hashes, each with the iteration that
// first sent it.
type seenSet struct {
	prefixes, prompts map[uint64]iterKey
}

// NewObserver returns an Observer that keeps perStage requests of each
// stage (DefaultObserved when perStage ≤ 0).
func NewObserver(perStage int) *Observer {
	if perStage <= 0 {
		perStage = DefaultObserved
	}
	return &Observer{limit: perStage, seed: maphash.MakeSeed(), stages: map[stageKey]*Tally{},
		seen: map[string]*seenSet{}}
}

// Observe notes req, which iteration it is about to send; dirty is its
// dirty-data kind ("" for a clean request). Warmup iterations, dirty and
// embeddings requests are left out: they never enter the clean latency
// figures the rules protect. Its signature is api.RunnerConfig's
// Observe hook.
func (o *Observer) Observe(it *engine.Iteration, req *engine.ChatRequest, dirty string) {
	if it == nil || req == nil || it.Warmup || dirty != "" || req.Raw != nil || req.Endpoint == engine.EndpointEmbeddings ||
		// No prefix cache or sampling serves these: their rules do not apply.
		req.Endpoint == engine.EndpointTranscriptions || req.Endpoint == engine.EndpointSpeech {
		return
	}
	t := o.reserve(stageKey{it.Scenario, it.Stage})
	if t == nil {
		return
	}
	prefix, whole := o.hash(req)
	f := flagsOf(req)
	cur := iterKey{it.VUID, it.Iteration}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.seen[it.Scenario]
	if s == nil {
		s = &seenSet{prefixes: map[uint64]iterKey{}, prompts: map[uint64]iterKey{}}
		o.seen[it.Scenario] = s
	}
	if repeats(s.prefixes, prefix, cur) {
		t.PrefixRepeats++
		if req.PrefixAsked.Shared > 0 {
			t.AskedRepeats++
		}
	}
	if repeats(s.prompts, whole, cur) {
		t.PromptRepeats++
	}
	f.count(t)
}

// reserve counts one more request of the stage and returns its tally, or
// nil once the stage has had its limit.
func (o *Observer) reserve(k stageKey) *Tally {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.stages[k]
	if t == nil {
		t = &Tally{Scenario: k.scenario, Stage: k.stage}
		o.stages[k] = t
		o.order = append(o.order, t)
	}
	if t.Requests >= o.limit {
		return nil
	}
	t.Requests++
	return t
}

// repeats reports whether h was first sent by another iteration than cur,
// and remembers cur for it when it is new.
func repeats(seen map[uint64]iterKey, h uint64, cur iterKey) bool {
	first, ok := seen[h]
	if !ok {
		seen[h] = cur
		return false
	}
	return first != cur
}

// Tallies returns a copy of every stage's tally, in the order their first
// request came.
func (o *Observer) Tallies() []Tally {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Tally, len(o.order))
	for i, t := range o.order {
		out[i] = *t
	}
	return out
}

// hash returns the hashes of the prompt's first PrefixBytes and of the
// whole prompt, in one pass and without allocating.
func (o *Observer) hash(req *engine.ChatRequest) (prefix, whole uint64) {
	var w prefixWriter
	w.h.SetSeed(o.seed)
	w.write(req.System)
	for i := range req.Messages {
		m := &req.Messages[i]
		w.write(m.Role)
		w.write("\x00")
		w.write(m.Content)
		for j := range m.Parts {
			// A server's prefix cache keys images and audio too: an item
			// is its name, the same for every request that sends it.
			if p := &m.Parts[j]; p.Type == engine.PartText {
				w.write(p.Text)
			} else if w.write("\x01"); p.Media != nil {
				w.write(p.Media.Name)
			} else {
				w.write(p.URL)
			}
		}
		w.write("\x00")
	}
	w.write(req.Prompt)
	whole = w.h.Sum64()
	if !w.done {
		return whole, whole
	}
	return w.prefix, whole
}

// prefixWriter hashes a prompt's parts in order, taking the hash of the
// first PrefixBytes on the way.
type prefixWriter struct {
	h      maphash.Hash
	n      int
	prefix uint64
	done   bool
}

func (w *prefixWriter) write(s string) {
	if !w.done && w.n+len(s) >= PrefixBytes {
		k := PrefixBytes - w.n
		w.h.WriteString(s[:k])
		w.prefix, w.done = w.h.Sum64(), true
		s = s[k:]
	}
	w.n += len(s)
	w.h.WriteString(s)
}

// flags are what one request says about its sampling and length.
type flags struct {
	maxTokens    int64 // 0: none set
	hasMax       bool
	temperature0 bool
	seeded       bool
	seed         int64
}

func flagsOf(req *engine.ChatRequest) flags {
	var f flags
	f.maxTokens, f.hasMax = int64(req.MaxTokens), req.MaxTokens > 0
	if req.Endpoint == engine.EndpointTranscriptions || req.Endpoint == engine.EndpointSpeech {
		// Their length is the audio's or the input's, not a token bound.
		f.hasMax = true
	}
	for _, k := range maxTokensKeys {
		if v, ok := req.Extra[k]; ok {
			n, _ := integer(v)
			f.maxTokens, f.hasMax = n, true
		}
	}
	if v, ok := req.Extra["temperature"]; ok {
		n, isNum := number(v)
		f.temperature0 = isNum && n == 0
	} else if req.Temperature != nil {
		f.temperature0 = *req.Temperature == 0
	}
	if v, ok := req.Extra["seed"]; ok {
		f.seed, f.seeded = integer(v)
	} else if req.Seed != nil {
		f.seed, f.seeded = *req.Seed, true
	}
	return f
}

// maxTokensKeys are the body fields that bound an answer's length, as a
// script may set them through extra: chat's two names and Responses'.
var maxTokensKeys = []string{"max_tokens", "max_completion_tokens", "max_output_tokens"}

func (f flags) count(t *Tally) {
	if f.hasMax {
		t.MaxTokens += f.maxTokens
	} else {
		t.NoMaxTokens++
	}
	if f.temperature0 {
		t.Temperature0++
	}
	if f.seeded {
		switch {
		case t.Seeded == 0:
			t.Seeds, t.Seed = 1, f.seed
		case f.seed != t.Seed:
			t.Seeds = 2
		}
		t.Seeded++
	}
}

// number reads a JSON-ish number of an Extra field.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func integer(v any) (int64, bool) {
	n, ok := number(v)
	return int64(n), ok
}
