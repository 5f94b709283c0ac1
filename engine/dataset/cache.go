package dataset

import (
	"fmt"
	"path/filepath"
	"sync"
)

// Options tune how a file's records become items; the zero value picks the
// defaults.
type Options struct {
	// Field is the JSONL field holding the prompt ("prompt" when empty).
	// A field holding an OpenAI messages array gives conversations.
	Field string
	// Column is the CSV column holding the prompt ("prompt" when empty).
	Column string
	// Conversations makes ShareGPT give whole conversations instead of the
	// first human turn.
	Conversations bool
}

// DefaultField is the JSONL field and CSV column read unless Options name
// another.
const DefaultField = "prompt"

func (o Options) field() string {
	if o.Field == "" {
		return DefaultField
	}
	return o.Field
}

func (o Options) column() string {
	if o.Column == "" {
		return DefaultField
	}
	return o.Column
}

// cacheKey is everything that decides a loaded file's contents.
type cacheKey struct {
	path   string // absolute
	loader string
	opts   any // a comparable value: Options, or a trace's TraceFormat
}

// loads holds every pool (and trace) loaded from a file, so that a file is
// read once per process however many VUs ask for it. Failures are not
// kept: a later call after fixing the file reads it again.
var loads = struct {
	sync.Mutex
	m map[cacheKey]*loadEntry
}{m: map[cacheKey]*loadEntry{}}

type loadEntry struct {
	once sync.Once
	val  any
	err  error
}

// cached returns the pool of (path, loader, o), calling load on first use.
// Concurrent first calls wait for one load.
func cached(path, loader string, o Options, load func() (*Pool, error)) (*Pool, error) {
	return cachedLoad(path, loader, o, load)
}

// cachedLoad returns what load gave for (path, loader, opts), calling it
// on first use; opts must be comparable.
func cachedLoad[T any](path, loader string, opts any, load func() (T, error)) (T, error) {
	var zero T
	abs, err := filepath.Abs(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	k := cacheKey{abs, loader, opts}
	loads.Lock()
	e, ok := loads.m[k]
	if !ok {
		e = &loadEntry{}
		loads.m[k] = e
	}
	loads.Unlock()
	e.once.Do(func() { e.val, e.err = load() })
	if e.err != nil {
		loads.Lock()
		if loads.m[k] == e {
			delete(loads.m, k)
		}
		loads.Unlock()
		return zero, e.err
	}
	return e.val.(T), nil
}

// finish turns the items read from path into a pool; none is an error.
func finish(path string, items []Item) (*Pool, error) {
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no prompts", path)
	}
	if cap(items) > len(items)+len(items)/16 {
		items = append([]Item(nil), items...) // drop append's growth slack
	}
	return newPool(items), nil
}
