package executor

import (
	"fmt"
	"math"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// segment is a stretch of scenario time over which the target rate moves
// linearly from r0 to r1 (iterations per second). l0 and l1 are the
// cumulative intensity Λ at its ends: the expected iterations since the
// scenario's start.
type segment struct {
	start, end time.Duration // offsets from the scenario's start
	r0, r1     float64
	l0, l1     float64
}

// rateProfile is an arrival-rate scenario's target rate over time: a
// piecewise-linear function made of its stages' steps and ramps. It is
// immutable once built, so the scheduler and Status share it freely.
type rateProfile struct {
	segs      []segment
	stageEnds []time.Duration // offset at which each stage ends
}

// newRateProfile builds sc's rate profile from its stages' shapes
// (engine.Scenario.StageLoads, the one rate integral). It returns an error
// for rates that are negative, NaN or infinite, which would make no
// schedule.
func newRateProfile(sc plan.Scenario) (*rateProfile, error) {
	if !validRate(sc.RatePerSecond(sc.StartRate)) {
		return nil, fmt.Errorf("scenario %q: start rate %v is not a rate", sc.Name, sc.StartRate)
	}
	p := &rateProfile{}
	var at time.Duration
	for i, l := range sc.StageLoads() {
		if st := sc.Stages[i]; !validRate(sc.RatePerSecond(st.Rate)) {
			return nil, fmt.Errorf("scenario %q: stage %d (%s): rate %v is not a rate", sc.Name, i+1, st.Name, st.Rate)
		}
		p.add(at, at+l.Ramp, l.From, l.To)
		p.add(at+l.Ramp, at+l.Duration(), l.To, l.To)
		at += l.Duration()
		p.stageEnds = append(p.stageEnds, at)
	}
	return p, nil
}

func validRate(r float64) bool { return r >= 0 && !math.IsInf(r, 0) }

// add appends a segment, skipping empty ones.
func (p *rateProfile) add(start, end time.Duration, r0, r1 float64) {
	if end <= start {
		return
	}
	l0 := 0.0
	if n := len(p.segs); n > 0 {
		l0 = p.segs[n-1].l1
	}
	l1 := l0 + plan.StageLoad{From: r0, To: r1, Ramp: end - start}.Integral()
	p.segs = append(p.segs, segment{start: start, end: end, r0: r0, r1: r1, l0: l0, l1: l1})
}

// duration is the profile's total length.
func (p *rateProfile) duration() time.Duration {
	if len(p.stageEnds) == 0 {
		return 0
	}
	return p.stageEnds[len(p.stageEnds)-1]
}

// stageStart is the offset at which stage i starts.
func (p *rateProfile) stageStart(i int) time.Duration {
	if i <= 0 {
		return 0
	}
	return p.stageEnds[i-1]
}

// rateAt is the target rate (per second) at offset off; 0 outside the profile.
func (p *rateProfile) rateAt(off time.Duration) float64 {
	for _, s := range p.segs {
		if off >= s.start && off < s.end {
			return s.r0 + (s.r1-s.r0)*float64(off-s.start)/float64(s.end-s.start)
		}
	}
	return 0
}

// expected is Λ(off), the expected number of arrivals in [0, off).
func (p *rateProfile) expected(off time.Duration) float64 {
	l := 0.0
	for _, s := range p.segs {
		if off <= s.start {
			break
		}
		x := (min(off, s.end) - s.start).Seconds()
		k := (s.r1 - s.r0) / (s.end - s.start).Seconds()
		l = s.l0 + s.r0*x + k*x*x/2
	}
	return l
}

// invert returns the earliest offset at which Λ reaches level, searching
// from segment seg on (levels only grow, so the caller keeps seg). Within a
// segment Λ is quadratic and is inverted in closed form. ok is false once
// level lies beyond the profile's end.
func (p *rateProfile) invert(seg int, level float64) (next int, off time.Duration, ok bool) {
	// A level equal to a segment's end belongs to the next segment with a
	// positive rate, so no arrival lands where the rate is zero.
	for seg < len(p.segs) && level >= p.segs[seg].l1 {
		seg++
	}
	if seg == len(p.segs) {
		return seg, 0, false
	}
	s := p.segs[seg]
	dl := max(level-s.l0, 0)
	k := (s.r1 - s.r0) / (s.end - s.start).Seconds()
	// x solves k/2·x² + r0·x = dl; this form stays exact when k is ~0.
	x := 0.0
	if den := s.r0 + math.Sqrt(max(s.r0*s.r0+2*k*dl, 0)); den > 0 {
		x = 2 * dl / den
	}
	off = s.start + time.Duration(math.Round(x*float64(time.Second)))
	return seg, min(off, s.end), true
}
