package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// treeLink is how a record read names its place in a tree, before the
// ids are resolved (linkTrees).
type treeLink struct {
	id, parent string // the record's own id and its parent's ("": none)
	// chain marks a record with a delay and no parent field: it follows its
	// session's previous record, as AIPerf's multi-turn Mooncake rows do.
	chain bool
	delay time.Duration
}

// child reports whether the record is timed by a parent, not by a time of
// its own.
func (l treeLink) child() bool { return l.parent != "" || l.chain }

// jsonTree reads a JSONL record's id, parent and delay into r.link.
func (tr *traceReader) jsonTree(obj map[string]json.RawMessage, r *timed) error {
	fs, line := tr.f.Fields, r.rec.Line
	var err error
	if r.link.id, err = jsonID(obj, fs.ID); err != nil {
		return fieldError(tr.path, line, fs.ID, err)
	}
	if r.link.parent, err = jsonID(obj, fs.Parent); err != nil {
		return fieldError(tr.path, line, fs.Parent, err)
	}
	raw := obj[fs.Delay]
	if fs.Delay == "" || isNull(raw) {
		return tr.noDelay(r)
	}
	if !isJSONNumber(raw) {
		return fieldError(tr.path, line, fs.Delay, fmt.Errorf("expected a non-negative number (in %s), got %s", tr.f.DelayUnit, jsonKind(raw)))
	}
	return tr.setDelay(r, string(raw))
}

// csvTree reads a CSV row's id, parent and delay cells into r.link.
func (c csvRow) tree(r *timed, cols traceColumns) error {
	fs := c.tr.f.Fields
	r.link.id, r.link.parent = c.tr.session(c.cell(cols.id)), c.tr.session(c.cell(cols.parent))
	v := c.cell(cols.delay)
	if v == "" {
		if err := c.tr.noDelay(r); err != nil {
			return c.fail(cols.delay, fs.Delay, fmt.Errorf("missing: a record with a parent starts its delay after the parent's answer"))
		}
		return nil
	}
	if err := c.tr.setDelay(r, v); err != nil {
		return c.fail(cols.delay, fs.Delay, unwrapField(err))
	}
	return nil
}

// unwrapField is the message of a field error without its place, which a
// CSV row names again with its cell's own line.
func unwrapField(err error) error {
	if se, ok := err.(*sourceError); ok {
		msg := se.err.Error()
		if i := strings.Index(msg, ": "); i >= 0 {
			return fmt.Errorf("%s", msg[i+2:])
		}
	}
	return err
}

// noDelay checks a record without a delay: a child must have one.
func (tr *traceReader) noDelay(r *timed) error {
	if r.link.parent == "" {
		return nil
	}
	return fieldError(tr.path, r.rec.Line, tr.f.Fields.Delay,
		fmt.Errorf("missing: a record with a parent starts its delay after the parent's answer"))
}

// setDelay reads a delay: a non-negative number in the format's DelayUnit.
// With no parent field, a delay makes the record follow its session's
// previous one (AIPerf's multi-turn rows); on a root it is not read.
func (tr *traceReader) setDelay(r *timed, s string) error {
	d, err := parseDelay(s, tr.f.DelayUnit)
	if err != nil {
		return fieldError(tr.path, r.rec.Line, tr.f.Fields.Delay, err)
	}
	r.link.chain = tr.f.Fields.Parent == ""
	if r.link.child() {
		r.link.delay = d
	}
	return nil
}

// parseDelay reads a gap: a non-negative number in unit.
func parseDelay(s, unit string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	ns := v * timeUnits[unit]
	if err != nil || math.IsNaN(ns) || ns < 0 || ns >= maxStampNs {
		return 0, fmt.Errorf("expected a non-negative number (in %s), got %s", unit, quoteValue(s))
	}
	return time.Duration(math.Round(ns)), nil
}

// jsonID reads an id: a string or an integer, "" when field is unnamed or
// the value is null.
func jsonID(obj map[string]json.RawMessage, field string) (string, error) {
	raw := obj[field]
	switch {
	case field == "" || isNull(raw):
		return "", nil
	case isJSONNumber(raw):
		return strings.TrimSpace(string(raw)), nil
	case firstByte(raw) == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return "", fmt.Errorf("expected a string or a number, got %s", jsonKind(raw))
}

// linkTrees resolves each record's parent (links are the records', in the
// file's order) and makes each child's At its parent's plus its delay, so
// that sorting keeps a parent before its children. It refuses duplicate
// ids, a parent no record has, a chained delay with no earlier turn to
// follow and parents that form a cycle, naming the line. It returns how
// many records are children.
func linkTrees(path string, fs TraceFields, recs []TraceRecord, links []treeLink) (int, error) {
	ids := map[string]int{}
	for i, l := range links {
		recs[i].ID = l.id
		if l.id == "" {
			continue
		}
		if j, dup := ids[l.id]; dup {
			return 0, fieldError(path, recs[i].Line, fs.ID, fmt.Errorf("%q is also line %d's id: ids must be unique", l.id, recs[j].Line))
		}
		ids[l.id] = i
	}
	children := 0
	last := map[string]int{} // a session's latest record, for chained delays
	for i, l := range links {
		p, err := parentOf(fs, recs[i], l, ids, last)
		if err != nil {
			return 0, fieldError(path, recs[i].Line, err.field, err.err)
		}
		if s := recs[i].Session; s != "" {
			last[s] = i
		}
		if p >= 0 {
			recs[i].Parent, recs[i].Delay = p+1, l.delay
			children++
		}
	}
	if children == 0 {
		return 0, nil
	}
	return children, timeChildren(path, fs.Parent, recs)
}

// linkError is a problem of one field of a record.
type linkError struct {
	field string
	err   error
}

// parentOf is the index of rec's parent, -1 for a root.
func parentOf(fs TraceFields, rec TraceRecord, l treeLink, ids, last map[string]int) (int, *linkError) {
	switch {
	case l.parent != "":
		p, ok := ids[l.parent]
		if !ok {
			return 0, &linkError{fs.Parent, fmt.Errorf("no record has id %q", l.parent)}
		}
		return p, nil
	case l.chain && rec.Session == "":
		return 0, &linkError{fs.Delay, fmt.Errorf("a record with a delay follows its session's previous record, and this one has no %s", fs.Session)}
	case l.chain:
		p, ok := last[rec.Session]
		if !ok {
			return 0, &linkError{fs.Delay, fmt.Errorf("the first record of session %q has no earlier record to follow: give it a %s instead", rec.Session, fs.Time)}
		}
		return p, nil
	}
	return -1, nil
}

// timeChildren sets each child's Depth and At (its parent's At plus its
// Delay), walking up to a record already timed; a walk that meets itself
// is a cycle, refused naming its lines.
func timeChildren(path, field string, recs []TraceRecord) error {
	const (
		unseen = iota
		walking
		timed
	)
	state := make([]uint8, len(recs))
	var walk []int
	for i := range recs {
		walk = walk[:0]
		j := i
		for state[j] == unseen && recs[j].Parent != 0 {
			state[j] = walking
			walk = append(walk, j)
			j = recs[j].Parent - 1
		}
		if state[j] == walking {
			return cycleError(path, field, recs, walk, j)
		}
		state[j] = timed
		for k := len(walk) - 1; k >= 0; k-- {
			c := walk[k]
			p := &recs[recs[c].Parent-1]
			recs[c].At, recs[c].Depth = p.At+recs[c].Delay, p.Depth+1
			state[c] = timed
		}
	}
	return nil
}

// cycleError names the lines of the cycle that walk ran into at j.
func cycleError(path, field string, recs []TraceRecord, walk []int, j int) error {
	var lines []string
	from := 0
	for k, c := range walk {
		if c == j {
			from = k
		}
	}
	for _, c := range walk[from:] {
		lines = append(lines, "line "+strconv.Itoa(recs[c].Line))
	}
	lines = append(lines, "line "+strconv.Itoa(recs[j].Line))
	return fieldError(path, recs[j].Line, field, fmt.Errorf("the parent ids form a cycle (%s)", strings.Join(lines, " → ")))
}
