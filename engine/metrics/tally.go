package metrics

import (
	"cmp"
	"fmt"
	"slices"
)

// tally counts distinct messages up to a cap, so that a script producing
// endless distinct texts cannot exhaust memory; the rest share one count.
type tally struct {
	counts map[string]int64
	first  string // the first message added
	other  int64
}

func newTally() tally { return tally{counts: map[string]int64{}} }

func (t *tally) add(msg string) {
	if len(t.counts) == 0 && t.other == 0 {
		t.first = msg
	}
	if _, ok := t.counts[msg]; ok || len(t.counts) < MaxScriptErrors {
		t.counts[msg]++
		return
	}
	t.other++
}

// list returns the messages by count, descending (ties by message), and
// the overflow entry last; the first message added is marked First.
func (t *tally) list() []ScriptError {
	list := make([]ScriptError, 0, len(t.counts)+1)
	for m, n := range t.counts {
		list = append(list, ScriptError{Message: m, Count: n, First: m == t.first})
	}
	slices.SortFunc(list, func(x, y ScriptError) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Message, y.Message))
	})
	if t.other > 0 {
		list = append(list, ScriptError{
			Message: fmt.Sprintf("(other messages beyond the first %d distinct)", MaxScriptErrors),
			Count:   t.other,
		})
	}
	return list
}
