package metrics

import (
	"cmp"
	"fmt"
	"maps"
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
		list = append(list, ScriptError{Message: otherMessages, Count: t.other})
	}
	return list
}

// otherMessages names the entry that counts the messages beyond the
// first MaxScriptErrors distinct ones.
var otherMessages = fmt.Sprintf("(other messages beyond the first %d distinct)", MaxScriptErrors)

// mergeTally joins lists of messages that tallies rendered. The first
// list's First message stays First, as lists do not say when their first
// message came.
func mergeTally(lists [][]ScriptError) tally {
	t := newTally()
	marked := false
	for _, list := range lists {
		for _, e := range list {
			if e.Message == otherMessages {
				t.other += e.Count
				continue
			}
			t.counts[e.Message] += e.Count
			if e.First && !marked {
				t.first, marked = e.Message, true
			}
		}
	}
	t.fold()
	return t
}

// fold keeps the MaxScriptErrors most frequent messages, and the first,
// and counts the others together, as one tally of all the messages would
// have kept at most that many.
func (t *tally) fold() {
	if len(t.counts) <= MaxScriptErrors {
		return
	}
	msgs := slices.Collect(maps.Keys(t.counts))
	slices.SortFunc(msgs, func(x, y string) int {
		return cmp.Or(cmp.Compare(b2f(y == t.first), b2f(x == t.first)),
			cmp.Compare(t.counts[y], t.counts[x]), cmp.Compare(x, y))
	})
	for _, m := range msgs[MaxScriptErrors:] {
		t.other += t.counts[m]
		delete(t.counts, m)
	}
}
