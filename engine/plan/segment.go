package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxSegments bounds --segment's n: far beyond any deployment, and small
// enough that every share of a plan's counts stays meaningful.
const MaxSegments = 10000

// Segment is the i-th of n disjoint parts of one plan (--segment i/n),
// which together are the whole run. Work is dealt out round robin: the
// k-th VU, arrival or request of the whole plan (0-based) belongs to
// segment k mod n. So each count splits exactly, the remainder going to
// the first segments (10 VUs in 4 segments are 3+3+2+2), the union of
// the segments' ids is the whole run's, and every segment can tell which
// of the one seeded arrival sequence's arrivals are its own. The zero
// value is the whole plan.
type Segment struct {
	Index int // 0-based, < Count
	Count int // 0 or 1: not segmented
}

// ParseSegment reads "i/n": 0 ≤ i < n ≤ MaxSegments. i is 0-based, as
// Kubernetes' JOB_COMPLETION_INDEX.
func ParseSegment(s string) (Segment, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Segment{}, fmt.Errorf("%q: want i/n, e.g. 0/4 for the first of four segments", s)
	}
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case err1 != nil || err2 != nil:
		return Segment{}, fmt.Errorf("%q: want i/n with whole numbers, e.g. 0/4", s)
	case n < 1 || n > MaxSegments:
		return Segment{}, fmt.Errorf("%q: n must be between 1 and %d", s, MaxSegments)
	case i < 0 || i >= n:
		return Segment{}, fmt.Errorf("%q: i is 0-based and must be below n (0 to %d)", s, n-1)
	}
	return Segment{Index: i, Count: n}, nil
}

// Whole reports whether s is the whole plan.
func (s Segment) Whole() bool { return s.Count <= 1 }

// String is "i/n", or "" for the whole plan.
func (s Segment) String() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Share is how many of total items (VUs, iterations, requests) belong to
// the segment: those with index k ≡ Index (mod Count).
func (s Segment) Share(total int) int {
	if s.Whole() {
		return total
	}
	if total <= s.Index {
		return 0
	}
	return (total-s.Index-1)/s.Count + 1
}

// Owns reports whether the whole plan's item k (0-based) is the segment's.
func (s Segment) Owns(k int64) bool {
	return s.Whole() || k%int64(s.Count) == int64(s.Index)
}

// Global maps the segment's local 1-based id (its n-th VU, its n-th
// request) to an id that is unique across all segments: the id the same
// item has in the whole plan when the segments run alike.
func (s Segment) Global(local int64) int64 {
	if s.Whole() || local <= 0 {
		return local
	}
	return (local-1)*int64(s.Count) + int64(s.Index) + 1
}

// ParseStartAt reads --start-at: an RFC 3339 time, or "+30s" (a Go
// duration) from now.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("%q: want +DURATION from now, e.g. +30s or +2m", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time such as 2026-12-01T15:04:05Z, or +30s from now", s)
	}
	return t, nil
}

// Fingerprint identifies a plan for llmload merge: a hash of the
// scenario's source and of everything in the plan that shapes the load
// and its judgement, but not the target (segments in different networks
// may reach one server at different addresses), the segment or the start
// barrier. It is PlanParts(source, nil, nil).Fingerprint(): a plan
// without parameters or data files.
func (p Plan) Fingerprint(source []byte) string {
	return p.Parts(source, nil, nil).Fingerprint()
}
