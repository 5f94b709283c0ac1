package export

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// tagLimit bounds the values each exported tag may take. Safe for
// concurrent use; it is consulted only when a series is first made, and
// on every request whose tag value was refused.
type tagLimit struct {
	names []string
	mu    sync.Mutex
	seen  []map[string]struct{} // per tag, the admitted values
	// refused are, per tag, how many values were folded and the first few.
	refused  []int64
	examples [][]string
}

// refusedExamples is how many refused values a warning names.
const refusedExamples = 3

func newTagLimit(names []string) *tagLimit {
	l := &tagLimit{names: names, seen: make([]map[string]struct{}, len(names)),
		refused: make([]int64, len(names)), examples: make([][]string, len(names))}
	for i := range l.seen {
		l.seen[i] = map[string]struct{}{}
	}
	return l
}

// fold replaces each value beyond its tag's MaxTagValues with Overflow and
// reports whether it replaced any. The empty value (the tag absent) is
// no value.
func (l *tagLimit) fold(vals *[MaxTags]string) bool {
	if len(l.names) == 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	folded := false
	for i := range l.names {
		v := vals[i]
		if v == "" || v == Overflow {
			continue
		}
		if _, ok := l.seen[i][v]; ok {
			continue
		}
		if len(l.seen[i]) < MaxTagValues {
			l.seen[i][v] = struct{}{}
			continue
		}
		l.refused[i]++
		if len(l.examples[i]) < refusedExamples && !slices.Contains(l.examples[i], v) {
			l.examples[i] = append(l.examples[i], v)
		}
		vals[i], folded = Overflow, true
	}
	return folded
}

// Refusal is an exported tag that took more than MaxTagValues values.
type Refusal struct {
	Tag      string   `json:"tag"`
	Refused  int64    `json:"refused"`  // requests whose value was folded into Overflow
	Examples []string `json:"examples"` // the first few refused values
}

// String says what was refused, naming a few values.
func (r Refusal) String() string {
	q := make([]string, len(r.Examples))
	for i, e := range r.Examples {
		q[i] = fmt.Sprintf("%q", e)
	}
	return fmt.Sprintf("export: tag %q took more than %d values (refused %s, ...): %d requests were exported with %s=%q instead; "+
		"a tag that varies per request (an id, a prompt) does not belong in options.export.tags",
		r.Tag, MaxTagValues, strings.Join(q, ", "), r.Refused, r.Tag, Overflow)
}

// refusals returns the tags that overflowed, in options.export.tags order.
func (l *tagLimit) refusals() []Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Refusal
	for i, name := range l.names {
		if l.refused[i] > 0 {
			out = append(out, Refusal{Tag: name, Refused: l.refused[i], Examples: slices.Clone(l.examples[i])})
		}
	}
	return out
}

// CheckTags validates options.export.tags: at most MaxTags, each a valid
// label name, none twice, none a label llmload sets itself.
func CheckTags(tags []string) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("%d tags; at most %d may become labels", len(tags), MaxTags)
	}
	for i, t := range tags {
		switch {
		case !validLabel(t):
			return fmt.Errorf("tag %q is not a valid label name ([a-zA-Z_][a-zA-Z0-9_]*)", t)
		case slices.Contains(reserved, t) || strings.HasPrefix(t, "__"):
			return fmt.Errorf("tag %q is a label llmload sets itself (%s)", t, strings.Join(reserved[:len(reserved)-2], ", "))
		case slices.Contains(tags[:i], t):
			return fmt.Errorf("tag %q is listed twice", t)
		}
	}
	return nil
}

// validLabel reports whether s is a Prometheus label name.
func validLabel(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
