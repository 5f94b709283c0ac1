package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// ReplayOptions choose the slice of a trace to replay and its pace; the
// zero value replays the whole trace as recorded, without sessions.
type ReplayOptions struct {
	// TimeOffset skips the records before it; times are re-based to the
	// first record kept.
	TimeOffset time.Duration
	// Limit is the most records replayed; 0 replays them all.
	Limit int
	// Speedup divides the records' offsets (2 replays twice as fast, 0.5
	// at half speed); 0 means 1.
	Speedup float64
	// Sessions numbers each record's session (1, 2, ... in order of first
	// appearance) so that a session's records run as one conversation.
	Sessions bool
	// WarmTurns marks the first WarmTurns turns of each session (with
	// Sessions), or levels of each tree (depth below WarmTurns), Warm.
	WarmTurns int
}

// Replay returns the arrivals of the records o keeps, in order of time,
// with the trace's source and a digest of its content and o. It is an
// error for the offset to be beyond the last record, for the limit to be
// negative and for the speedup to be negative, NaN or infinite.
func (t *Trace) Replay(o ReplayOptions) (*plan.Trace, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	recs := t.Records
	if len(recs) == 0 {
		return nil, errNoRecords
	}
	speed := o.speedup()
	last := recs[len(recs)-1].At
	if o.TimeOffset > last {
		return nil, fmt.Errorf("trace %s: time_offset %v is beyond the trace, which lasts %v", t.Path, o.TimeOffset, last)
	}
	first := sort.Search(len(recs), func(i int) bool { return recs[i].At >= o.TimeOffset })
	n := len(recs) - first
	if o.Limit > 0 {
		n = min(n, o.Limit)
	}
	base := recs[first+firstRoot(recs[first:first+n])].At
	if span := float64(recs[first+n-1].At-base) / speed; span > math.MaxInt64/2 {
		return nil, fmt.Errorf("trace %s: at speedup %g the replay would last %.0f years", t.Path, speed, span/float64(365*24*time.Hour))
	}
	out := &plan.Trace{Source: t.source(), Digest: t.digest(o), Speedup: speed,
		Arrivals: make([]plan.TraceArrival, n)}
	numbers := map[string]int{}
	kept := make(map[int]int, n) // record -> 1 + its arrival's index
	turns := map[int]int{}       // a session's turns so far
	out.Arrivals = out.Arrivals[:0]
	for i := range n {
		rec := &recs[first+i]
		a := plan.TraceArrival{At: time.Duration(math.Round(float64(rec.At-base) / speed)), Record: first + i}
		if rec.Parent != 0 {
			// A child whose parent is outside the slice has nothing to follow.
			if a.Parent = kept[rec.Parent-1]; a.Parent == 0 {
				continue
			}
			a.Delay = time.Duration(math.Round(float64(rec.Delay) / speed))
			out.Children++
		}
		if o.Sessions && rec.Session != "" {
			if a.Session = numbers[rec.Session]; a.Session == 0 {
				a.Session = len(numbers) + 1
				numbers[rec.Session] = a.Session
			}
		}
		a.Warm = o.warm(t, rec, a.Session, turns)
		out.Arrivals = append(out.Arrivals, a)
		kept[first+i] = len(out.Arrivals)
	}
	out.Sessions = len(numbers)
	out.WarmTurns = o.WarmTurns
	return out, nil
}

// warm reports whether rec is replayed as warmup: in a trace of trees, a
// record above depth WarmTurns; otherwise one of the first WarmTurns
// turns of its session (counted in turns).
func (o ReplayOptions) warm(t *Trace, rec *TraceRecord, session int, turns map[int]int) bool {
	switch {
	case o.WarmTurns == 0:
		return false
	case t.Children > 0:
		return rec.Depth < o.WarmTurns
	case session == 0:
		return false
	}
	turns[session]++
	return turns[session] <= o.WarmTurns
}

// firstRoot is the index in recs of the first record timed by its own
// time: the replay starts there, since a child before it has its parent
// outside the slice and is left out.
func firstRoot(recs []TraceRecord) int {
	for i, r := range recs {
		if r.Parent == 0 {
			return i
		}
	}
	return 0
}

func (o ReplayOptions) check() error {
	switch {
	case o.TimeOffset < 0:
		return fmt.Errorf("time_offset %v: want 0 or more", o.TimeOffset)
	case o.Limit < 0:
		return fmt.Errorf("limit %d: want 0 (all records) or more", o.Limit)
	case math.IsNaN(o.Speedup) || math.IsInf(o.Speedup, 0) || o.Speedup < 0:
		return fmt.Errorf("speedup %g: want a number above 0", o.Speedup)
	case o.WarmTurns < 0:
		return fmt.Errorf("warm_turns %d: want 0 or more", o.WarmTurns)
	}
	return nil
}

func (o ReplayOptions) speedup() float64 {
	if o.Speedup == 0 {
		return 1
	}
	return o.Speedup
}

// source names the file and its format, e.g. "data/trace.jsonl (mooncake)".
func (t *Trace) source() string { return fmt.Sprintf("%s (%s)", t.Path, t.Format.Kind) }

// digest is a short hex SHA-256 of the file's content, the format it was
// read in and the replay's options: whatever changes the arrivals or the
// records changes it.
func (t *Trace) digest(o ReplayOptions) string {
	h := sha256.New()
	h.Write(t.sum[:])
	f := t.Format
	fmt.Fprintf(h, "\x00%q %q %d %+v\x00", f.Kind, f.TimeUnit, f.BlockTokens, flatFields(f.Fields))
	if t.Children > 0 {
		// Only trees read these: a flat trace keeps the digest it had.
		fmt.Fprintf(h, "%q %q %q %q\x00", f.Fields.ID, f.Fields.Parent, f.Fields.Delay, f.DelayUnit)
	}
	var b [8]byte
	for _, v := range []uint64{uint64(o.TimeOffset), uint64(o.Limit), math.Float64bits(o.speedup()), boolBit(o.Sessions), uint64(o.WarmTurns)} {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// flatFields are the fields every trace reads, printed as TraceFields
// printed before trees had fields, so that digests stay what they were.
func flatFields(fs TraceFields) any {
	type TraceFields struct {
		Time, Input, Output string
		HashIDs, Session    string
		Text, Messages      string
	}
	return TraceFields{fs.Time, fs.Input, fs.Output, fs.HashIDs, fs.Session, fs.Text, fs.Messages}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// errNoRecords guards a Trace built by hand: LoadTrace refuses a file
// without records.
var errNoRecords = errors.New("trace has no records")
