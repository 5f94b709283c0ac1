package metrics

import "math"

// MaxWindowSlip is how far, as a share of its planned length, a stage's
// window may be from the plan before its rates are suspect: a busy
// machine that wakes the stage controller late stretches one window and
// shortens the next.
const MaxWindowSlip = 0.01

// Slipped reports whether a stage that ran to its end (not cut) had a
// window more than MaxWindowSlip away from its planned length. Stages
// without a plan (iterations executors, older files) never slip.
func (s *StageSummary) Slipped() bool {
	return s.Complete && s.PlannedS > 0 && math.Abs(s.DurationS-s.PlannedS) > MaxWindowSlip*s.PlannedS
}

// WindowRequests is the number of requests started within the window:
// what ReqPerSec divides by DurationS (the graceful-stop tail left out).
func (s *StageSummary) WindowRequests() int64 { return s.Requests - s.TailRequests }

// WindowGoodRequests is GoodRequests without the tail: what Goodput
// divides by DurationS.
func (s *StageSummary) WindowGoodRequests() int64 { return s.GoodRequests - s.TailGoodRequests }

// WindowOutputTokens is OutputTokens without the tail's: what
// OutputTokPerSec divides by DurationS.
func (s *StageSummary) WindowOutputTokens() int64 { return s.OutputTokens - s.TailOutputTokens }
