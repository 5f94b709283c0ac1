package metrics

import (
	"cmp"
	"fmt"
	"maps"
)

// TargetSummary is the requests of one stage that one endpoint of
// options.targets served: a TagSummary with the counts that rates,
// goodput and errors need, so that every figure a stage has for throughput
// and errors can be read per target. TTFT, TPOT and E2E carry histograms,
// so that two targets compare with the exact tests.
type TargetSummary struct {
	TagSummary
	InputTokens  int64            `json:"input_tokens"`
	OutputTokens int64            `json:"output_tokens"`
	GoodRequests int64            `json:"good_requests,omitempty"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	// The part of the counts above that started in the stage's
	// graceful-stop tail, left out of the per-second rates as the stage's
	// own are.
	TailRequests     int64 `json:"tail_requests,omitempty"`
	TailOutputTokens int64 `json:"tail_output_tokens,omitempty"`
	TailInputTokens  int64 `json:"tail_input_tokens,omitempty"`
	TailGoodRequests int64 `json:"tail_good_requests,omitempty"`
}

// ReqPerSec is the target's share of the stage's request rate, over the
// stage's window of secs seconds (StageSummary.DurationS).
func (t TargetSummary) ReqPerSec(secs float64) float64 {
	return perSecond(float64(t.Requests-t.TailRequests), secs)
}

// OutputTokPerSec is the target's output token rate over the window.
func (t TargetSummary) OutputTokPerSec(secs float64) float64 {
	return perSecond(float64(t.OutputTokens-t.TailOutputTokens), secs)
}

// Goodput is the target's requests per second that met the SLO.
func (t TargetSummary) Goodput(secs float64) float64 {
	return perSecond(float64(t.GoodRequests-t.TailGoodRequests), secs)
}

// targetCell is one target's share of a stage.
type targetCell struct {
	tagCell
	inTok, outTok, good           int64
	tailRequests, tailOut, tailIn int64
	tailGood                      int64
	errors                        map[string]int64
}

// targetBreakdown accumulates a stage's requests per target. There are as
// many cells as the plan has targets: no cap is needed.
type targetBreakdown map[string]*targetCell

func newTargetCell() *targetCell {
	return &targetCell{tagCell: tagCell{
		ttft: newRecorder(sparseDurationGeo),
		tpot: newRecorder(sparseDurationGeo),
		e2e:  newRecorder(sparseDurationGeo),
	}}
}

// add records one clean request under its target; a request of a run
// with one target names none and is not broken down.
func (b *targetBreakdown) add(e *event) {
	if e.targetName == "" {
		return
	}
	if *b == nil {
		*b = targetBreakdown{}
	}
	c := (*b)[e.targetName]
	if c == nil {
		c = newTargetCell()
		(*b)[e.targetName] = c
	}
	c.record(e)
}

func (c *targetCell) record(e *event) {
	c.tagCell.add(e)
	if e.judged && e.good {
		c.good++
	}
	if e.tail {
		c.tailRequests++
		if e.judged && e.good {
			c.tailGood++
		}
	}
	if e.failed {
		if c.errors == nil {
			c.errors = map[string]int64{}
		}
		c.errors[cmp.Or(e.class, "unknown")]++
		return
	}
	c.inTok += int64(e.inTok)
	c.outTok += int64(e.outTok)
	if e.tail {
		c.tailOut += int64(e.outTok)
		c.tailIn += int64(e.inTok)
	}
}

// summary renders the breakdown; nil in a run with one target.
func (b targetBreakdown) summary() map[string]TargetSummary {
	if len(b) == 0 {
		return nil
	}
	out := make(map[string]TargetSummary, len(b))
	for name, c := range b {
		out[name] = c.summary()
	}
	return out
}

func (c *targetCell) summary() TargetSummary {
	ts := TargetSummary{
		TagSummary:   c.tagCell.summary(),
		InputTokens:  c.inTok,
		OutputTokens: c.outTok,
		GoodRequests: c.good,
		TailRequests: c.tailRequests, TailOutputTokens: c.tailOut, TailInputTokens: c.tailIn,
		TailGoodRequests: c.tailGood,
	}
	ts.TPOT = c.tpot.t.distWithHistogram()
	if len(c.errors) > 0 {
		ts.Errors = maps.Clone(c.errors)
	}
	return ts
}

// targetCellOf rebuilds a target's cell from its summary, for a merge.
func targetCellOf(ts TargetSummary) (*targetCell, error) {
	tc, err := tagCellOf(ts.TagSummary)
	if err != nil {
		return nil, err
	}
	return &targetCell{
		tagCell: *tc, inTok: ts.InputTokens, outTok: ts.OutputTokens, good: ts.GoodRequests,
		tailRequests: ts.TailRequests, tailOut: ts.TailOutputTokens, tailIn: ts.TailInputTokens,
		tailGood: ts.TailGoodRequests,
		errors:   maps.Clone(ts.Errors),
	}, nil
}

// absorb adds o's requests and values to c; o is not modified.
func (c *targetCell) absorb(o *targetCell) {
	c.tagCell.absorb(&o.tagCell)
	c.inTok += o.inTok
	c.outTok += o.outTok
	c.good += o.good
	c.tailRequests += o.tailRequests
	c.tailOut += o.tailOut
	c.tailIn += o.tailIn
	c.tailGood += o.tailGood
	for class, n := range o.errors {
		if c.errors == nil {
			c.errors = map[string]int64{}
		}
		c.errors[class] += n
	}
}

// targets merges the parts' breakdowns by target.
func (g *group) targets() (map[string]TargetSummary, error) {
	var b targetBreakdown
	for i, p := range g.sums {
		for name, ts := range p.ByTarget {
			c, err := targetCellOf(ts)
			if err != nil {
				return nil, fmt.Errorf("part %d: stage %s/%s: target %s: %w", g.parts[i], g.id.scenario, g.id.stage, name, err)
			}
			if b == nil {
				b = targetBreakdown{}
			}
			if prev, ok := b[name]; ok {
				prev.absorb(c)
			} else {
				b[name] = c
			}
		}
	}
	return b.summary(), nil
}

// TargetTag is the filter key that selects the requests one endpoint of
// options.targets served (ttft{target:b}.p99).
const TargetTag = "target"

// ForTarget is the stage as one target served it: the stage's window,
// load and labels, with the target's requests, rates, goodput, errors and
// TTFT, TPOT and E2E. The figures a target's breakdown does not keep (ITL,
// TTFB, TTFC, the checks, ...) are empty, never the whole stage's. ok is
// false when the target served none of the stage's requests.
func (s *StageSummary) ForTarget(name string) (StageSummary, bool) {
	t, ok := s.ByTarget[name]
	if !ok {
		return StageSummary{}, false
	}
	secs := s.DurationS
	v := StageSummary{
		Scenario: s.Scenario, Stage: s.Stage, Index: s.Index, VUs: s.VUs, TargetRate: s.TargetRate,
		Start: s.Start, End: s.End, DurationS: secs, Complete: s.Complete, PlannedS: s.PlannedS, LateS: s.LateS,
		Requests: t.Requests, OK: t.OK, Failed: t.Failed, Errors: t.Errors,
		ReqPerSec:    t.ReqPerSec(secs),
		OutputTokens: t.OutputTokens, InputTokens: t.InputTokens,
		OutputTokPerSec: t.OutputTokPerSec(secs),
		InputTokPerSec:  perSecond(float64(t.InputTokens-t.TailInputTokens), secs),
		GoodRequests:    t.GoodRequests, Goodput: t.Goodput(secs),
		TailRequests: t.TailRequests, TailOutputTokens: t.TailOutputTokens,
		TailInputTokens: t.TailInputTokens, TailGoodRequests: t.TailGoodRequests,
		GoodShare: ratio(t.GoodRequests, t.Requests),
		TTFT:      t.TTFT, TPOT: t.TPOT, E2E: t.E2E,
	}
	return v, true
}
