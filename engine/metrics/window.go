package metrics

import (
	"fmt"
	"math"
	"strconv"
)

// MaxWindowSlip is how far, as a share of its planned length, a stage's
// window may be from the plan before its rates are suspect: a busy
// machine that wakes the stage controller late stretches one window and
// shortens the next.
const MaxWindowSlip = 0.01

// Slipped reports whether a stage that ran to its end (not cut) did not
// hold its load level for its planned window: its controller changed the
// load more than MaxWindowSlip of the window late (LateS), or — in files
// from before stage marks carried the planned boundaries — its window
// itself was that far from the plan. Stages without a plan (iterations
// executors, older files) never slip.
func (s *StageSummary) Slipped() bool {
	if !s.Complete || s.PlannedS <= 0 {
		return false
	}
	slip := MaxWindowSlip * s.PlannedS
	return s.LateS > slip || math.Abs(s.DurationS-s.PlannedS) > slip
}

// SlipReason says how a Slipped stage slipped, in a few words: "its load
// changed 3.0 s late in its 20 s window" or "its window was 23.0 s,
// planned 20 s"; "" when it did not.
func (s *StageSummary) SlipReason() string {
	switch {
	case !s.Slipped():
		return ""
	case s.LateS > MaxWindowSlip*s.PlannedS:
		return fmt.Sprintf("its load changed %.1f s late in its %s s window", s.LateS, strconv.FormatFloat(s.PlannedS, 'f', -1, 64))
	}
	return fmt.Sprintf("its window was %.1f s, planned %s s", s.DurationS, strconv.FormatFloat(s.PlannedS, 'f', -1, 64))
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
