// Package library reads a scenario library, a directory of scenarios: what
// each measures, from its header comment, and the --set keys it reads,
// from its source (luabind.ScanParams), without running any of them. The
// header also names its keys on Keys lines, so a reader need not open the
// code; Mismatch tells when those lines and the code disagree.
package library

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmload/llmload/luabind"
)

// Scenario is one file of a library.
type Scenario struct {
	Path string
	// Summary is the header comment's first paragraph, without the file
	// name it starts with; "" when the file has no header.
	Summary string
	// Keys are the --set keys the source reads, sorted by name then
	// default; a key read with two defaults is there twice.
	Keys []Key
	// Dynamic is the line of an llm.param call with a computed key (the
	// script may read keys no listing can name); 0 when there is none.
	Dynamic int
	// Header are the keys the header's Keys lines name, sorted as Keys;
	// KeysLine is the first of those lines, 0 when there is none.
	Header   []Key
	KeysLine int
	// Err says why the file could not be read; the fields above are then
	// empty but for Path.
	Err error
}

// Name is the file's name without its directory.
func (s Scenario) Name() string { return filepath.Base(s.Path) }

// ErrNoScenarios is List's error for a directory without a *.lua file: a
// wrong path more often than an empty library.
var ErrNoScenarios = errors.New("no scenarios (*.lua files)")

// List reads every *.lua file in dir, in name order. A file that cannot be
// read or parsed has its Err set and does not stop the others; List's own
// error is for dir itself.
func List(dir string) ([]Scenario, error) {
	info, err := os.Stat(dir)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", dir, pe.Err) // "stat" says nothing to a user
	} else if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoScenarios)
	}
	slices.Sort(paths)
	list := make([]Scenario, len(paths))
	for i, p := range paths {
		list[i] = Read(p)
	}
	return list, nil
}

// Read reads one scenario file.
func Read(path string) Scenario {
	s := Scenario{Path: path}
	src, err := os.ReadFile(path)
	if err != nil {
		s.Err = fmt.Errorf("read scenario: %w", err)
		return s
	}
	params, err := luabind.ScanParams(path, src)
	if err != nil {
		s.Err = err
		return s
	}
	h, err := parseHeader(path, string(src))
	if err != nil {
		s.Err = err
		return s
	}
	s.Summary, s.Header, s.KeysLine = h.summary, h.keys, h.keysLine
	s.Keys, s.Dynamic = codeKeys(params), params.Dynamic
	return s
}

// codeKeys are the distinct (key, default) pairs of the source's calls.
func codeKeys(p luabind.Params) []Key {
	keys := make([]Key, 0, len(p.Reads))
	for _, r := range p.Reads {
		k := Key{Name: r.Key}
		switch r.DefaultKind {
		case luabind.DefaultLiteral:
			k.Default = spell(r.Default)
		case luabind.DefaultComputed:
			k.Default = computed
		}
		keys = append(keys, k)
	}
	return sortKeys(keys)
}

// Mismatch says how the header's Keys lines and the source disagree; nil
// when they name the same keys with the same defaults, or when neither
// names any.
func (s Scenario) Mismatch() error {
	if s.Err != nil || slices.Equal(s.Header, s.Keys) {
		return nil
	}
	if s.KeysLine == 0 {
		return fmt.Errorf("%s:1: the header has no %q line; the source reads %s", s.Path, keysPrefix, joinKeys(s.Keys))
	}
	var parts []string
	if only := missing(s.Keys, s.Header); len(only) > 0 {
		parts = append(parts, "the source also reads "+joinKeys(only))
	}
	if only := missing(s.Header, s.Keys); len(only) > 0 {
		parts = append(parts, "the source does not read "+joinKeys(only))
	}
	return fmt.Errorf("%s:%d: the header's keys disagree with the llm.param calls: %s", s.Path, s.KeysLine, strings.Join(parts, "; "))
}

// missing are the keys of a not in b.
func missing(a, b []Key) []Key {
	var out []Key
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
