// Package dataset provides the prompts a scenario sends: pools loaded from
// files (text, JSONL, ShareGPT, CSV) or given inline, and synthetic prompts
// of a drawn token length. It knows no Lua; luabind wraps it.
package dataset

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/tokenize"
)

// Item is one pool entry: a prompt text, or a whole conversation. Exactly
// one of the two is set. Messages is shared by every VU: never modify it.
// An item of a media dataset (LoadMedia) is one user message whose
// Parts are its prompt text and its images, shared likewise.
type Item struct {
	Text     string
	Messages []engine.Message
}

// Pool is an immutable list of items, shared read-only by every VU: a VU
// holds a *Pool and a cursor, never a copy, so 10,000 VUs cost one copy of
// the data. Safe for concurrent use.
type Pool struct {
	items []Item

	// filtered memoises Filter, because every VU runs a script's top level
	// and would otherwise tokenize the whole pool once per VU.
	mu       sync.Mutex
	filtered map[filterKey]*filterEntry
}

type filterKey struct {
	min, max int
	codec    string
}

type filterEntry struct {
	once sync.Once
	pool *Pool
	err  error
}

// New returns a pool of the given items, e.g. a script's inline prompts.
// An empty list, or an item with neither text nor messages, is an error.
func New(items []Item) (*Pool, error) {
	if len(items) == 0 {
		return nil, errors.New("dataset: empty pool: give at least one prompt")
	}
	for i, it := range items {
		if it.Text == "" && len(it.Messages) == 0 {
			return nil, fmt.Errorf("dataset: item %d is empty", i+1)
		}
	}
	return newPool(append([]Item(nil), items...)), nil
}

func newPool(items []Item) *Pool { return &Pool{items: items} }

// Len returns the number of items; at least one.
func (p *Pool) Len() int { return len(p.items) }

// Item returns item i modulo Len, so a cursor may count up forever and a
// negative index counts from the end.
func (p *Pool) Item(i int) Item {
	n := len(p.items)
	i %= n
	if i < 0 {
		i += n
	}
	return p.items[i]
}

// Filter returns the pool of the items whose input length in tokens (the
// text, or the sum of the messages' contents) lies within [min, max]; 0
// leaves a bound open. The result is memoised per (min, max, encoding), so
// every VU calling it gets the same *Pool. The items share their strings
// with p. No item left is an error.
func (p *Pool) Filter(min, max int, codec tokenize.Codec) (*Pool, error) {
	switch {
	case codec == nil:
		return nil, errors.New("dataset: filter: no tokenizer")
	case min < 0 || max < 0:
		return nil, fmt.Errorf("dataset: filter: negative token bound (min %d, max %d)", min, max)
	case max > 0 && min > max:
		return nil, fmt.Errorf("dataset: filter: min %d > max %d tokens", min, max)
	}
	if min == 0 && max == 0 {
		return p, nil
	}
	e := p.filterEntry(filterKey{min, max, codec.Name()})
	e.once.Do(func() { e.pool, e.err = p.filter(min, max, codec) })
	return e.pool, e.err
}

func (p *Pool) filterEntry(k filterKey) *filterEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.filtered == nil {
		p.filtered = map[filterKey]*filterEntry{}
	}
	e, ok := p.filtered[k]
	if !ok {
		e = &filterEntry{}
		p.filtered[k] = e
	}
	return e
}

func (p *Pool) filter(min, max int, codec tokenize.Codec) (*Pool, error) {
	var kept []Item
	lo, hi := -1, 0
	for _, it := range p.items {
		n := InputTokens(it, codec)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = maxInt(hi, n)
		if n >= min && (max == 0 || n <= max) {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("dataset: filter: no prompt has %s tokens (%s: the pool's %d prompts have %d to %d)",
			bounds(min, max), codec.Name(), len(p.items), lo, hi)
	}
	return newPool(kept), nil
}

// InputTokens returns an item's input length in tokens: its text, or the
// sum of its messages' contents (the chat template's few tokens a message
// are left out, as they depend on the model).
func InputTokens(it Item, codec tokenize.Codec) int {
	if it.Messages == nil {
		return codec.Count(it.Text)
	}
	n := 0
	for _, m := range it.Messages {
		n += codec.Count(m.Content)
	}
	return n
}

func bounds(min, max int) string {
	var b strings.Builder
	if min > 0 {
		fmt.Fprintf(&b, "≥ %d", min)
	}
	if max > 0 {
		if b.Len() > 0 {
			b.WriteString(" and ")
		}
		fmt.Fprintf(&b, "≤ %d", max)
	}
	return b.String()
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
