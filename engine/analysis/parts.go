package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/servermetrics"
)

// PointParts are a stage's breakdown percentiles (metrics.BreakdownSummary),
// in ms, as the cliff's explanation reads them.
type PointParts struct {
	// Source is "spans", "timings", or "spans+timings" for a stage split
	// by both; "metrics" for one read from the server's /metrics
	// histograms over the stage (no residual, upload or tail then).
	Source string       `json:"source"`
	Count  int64        `json:"count"`
	Parts  []PartFigure `json:"parts"`
}

// PartFigure is one part's median and p99 at a stage, in ms.
type PartFigure struct {
	Part string  `json:"part"` // upload, residual, queue, prefill, decode, tail
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// Explanation is where a finding's latency grew, from the stage before it
// to its own: each part's change at the finding's percentile, and the one
// that grew most.
type Explanation struct {
	Quantile string       `json:"quantile"` // p50 or p99
	From     string       `json:"from"`     // the stage compared with
	Grew     string       `json:"grew"`     // the part that grew most; "" when none grew
	Changes  []PartChange `json:"changes"`
	Text     string       `json:"text"`
}

// PartChange is one part's figure at the two stages, ms.
type PartChange struct {
	Part   string  `json:"part"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Flat   bool    `json:"flat"`
}

// partsOf is st's breakdown for a Point; nil when the server timed none
// of its requests.
func partsOf(st metrics.StageSummary) *PointParts {
	bd := st.Breakdown
	if bd == nil || bd.Requests == 0 {
		return nil
	}
	p := &PointParts{Count: bd.Requests, Source: "timings"}
	switch {
	case bd.FromSpans > 0 && bd.FromTimings > 0:
		p.Source = "spans+timings"
	case bd.FromSpans > 0:
		p.Source = "spans"
	}
	for _, d := range []struct {
		name string
		d    metrics.Dist
	}{{"upload", bd.Upload}, {"residual", bd.Residual}, {"queue", bd.Queue}, {"prefill", bd.Prefill},
		{"decode", bd.Decode}, {"tail", bd.Tail}} {
		if d.d.Count > 0 {
			p.Parts = append(p.Parts, PartFigure{Part: d.name, P50: d.d.P50, P99: d.d.P99})
		}
	}
	return p
}

func (p *PointParts) figure(part string) (PartFigure, bool) {
	if p == nil {
		return PartFigure{}, false
	}
	for _, f := range p.Parts {
		if f.Part == part {
			return f, true
		}
	}
	return PartFigure{}, false
}

// ttftParts and e2eParts are the parts each latency is the sum of.
var (
	ttftParts = []string{"queue", "prefill", "residual", "upload"}
	e2eParts  = []string{"queue", "prefill", "decode", "residual", "tail", "upload"}
)

// partMeans says what a part's growth tells.
var partMeans = map[string]string{
	"queue":    "requests queue",
	"prefill":  "prompt processing slows (longer prompts, or prefill sharing the batch)",
	"decode":   "decoding slows (a fuller batch)",
	"residual": "the network or the server's front (parsing, tokenising) slows",
	"tail":     "the end of the stream slows",
	"upload":   "the request bodies take longer to send",
}

// flatShare is how small a part's change is, against the largest, to be
// called flat.
const flatShare = 0.1

// explain says which part of f's latency grew from the point before f's
// stage to it; nil when either has no breakdown or f is not a latency
// finding at a stage after the first.
func explain(f Finding, s Sweep) *Explanation {
	if !f.Found || f.Stage == "" {
		return nil
	}
	parts, q := ttftParts, "p50"
	switch {
	case strings.HasPrefix(f.Metric, "ttft_"):
	case strings.HasPrefix(f.Metric, "e2e_"):
		parts = e2eParts
	case f.Kind == KindKnee:
	default:
		return nil
	}
	if strings.HasSuffix(f.Metric, "_p99") || strings.HasSuffix(f.Metric, "_p90") {
		q = "p99"
	}
	at := -1
	for i, p := range s.Points {
		if p.Stage == f.Stage {
			at = i
		}
	}
	if at < 1 || s.Points[at].Parts == nil || s.Points[at-1].Parts == nil {
		return nil
	}
	before, after := s.Points[at-1], s.Points[at]
	e := &Explanation{Quantile: q, From: before.Stage}
	most := 0.0
	for _, name := range parts {
		b, okB := before.Parts.figure(name)
		a, okA := after.Parts.figure(name)
		if !okB || !okA {
			continue
		}
		c := PartChange{Part: name, Before: b.P50, After: a.P50}
		if q == "p99" {
			c.Before, c.After = b.P99, a.P99
		}
		e.Changes = append(e.Changes, c)
		if g := c.After - c.Before; g > most {
			most, e.Grew = g, name
		}
	}
	if len(e.Changes) == 0 {
		return nil
	}
	for i := range e.Changes {
		c := &e.Changes[i]
		c.Flat = math.Abs(c.After-c.Before) <= flatShare*most || most == 0
	}
	e.Text = explanationText(e, after.Parts.Source)
	if after.Parts.Source == "metrics" {
		e.Text += " (from the server's /metrics histograms)"
	}
	return e
}

// explanationText: "queue p50 200 ms → 1.7 s, prefill flat (62 ms),
// residual flat (2 ms): requests queue".
func explanationText(e *Explanation, source string) string {
	if e.Grew == "" {
		return "no part of it grew (" + partList(e) + ")"
	}
	var grew []string
	for _, c := range e.Changes {
		if !c.Flat {
			grew = append(grew, fmt.Sprintf("%s %s %s → %s", c.Part, e.Quantile, partText(c.Before), partText(c.After)))
		}
	}
	var flat []string
	for _, c := range e.Changes {
		if c.Flat {
			flat = append(flat, fmt.Sprintf("%s flat (%s)", c.Part, partText(c.After)))
		}
	}
	means := partMeans[e.Grew]
	if e.Grew == "residual" && source == "timings" {
		means = "requests wait for a slot, or the network or the server's front slows (llama.cpp's timings do not time the wait apart)"
	}
	return strings.Join(append(grew, flat...), ", ") + ": " + means
}

func partList(e *Explanation) string {
	var out []string
	for _, c := range e.Changes {
		out = append(out, fmt.Sprintf("%s %s", c.Part, partText(c.After)))
	}
	return strings.Join(out, ", ")
}

// serverParts fills, for each point of s whose requests the server did not
// time one by one, the parts its /metrics histograms give over the stage's
// window (vLLM's queue, prefill and decode time): the explanation's source
// when no span or timings came. Their p50 is the mean of the scrape
// intervals' medians, their p99 the worst interval's.
func (sv Server) serverParts(s *Sweep, stages []metrics.StageSummary) {
	if sv.Metrics == nil || sv.Start.IsZero() {
		return
	}
	for i, st := range scenarioStages(stages, s.Scenario) {
		if i >= len(s.Points) || s.Points[i].Parts != nil {
			continue
		}
		from, to := st.Start.Sub(sv.Start).Seconds(), st.End.Sub(sv.Start).Seconds()
		p, ok := servermetrics.StageParts(sv.Metrics, from, to)
		if !ok {
			continue
		}
		pp := &PointParts{Source: "metrics"}
		for _, x := range []struct {
			name string
			part *servermetrics.Part
		}{{"queue", p.Queue}, {"prefill", p.Prefill}, {"decode", p.Decode}} {
			if x.part != nil && x.part.P50MS != nil && x.part.P99MS != nil {
				pp.Parts = append(pp.Parts, PartFigure{Part: x.name, P50: *x.part.P50MS, P99: *x.part.P99MS})
			}
		}
		if len(pp.Parts) > 0 {
			s.Points[i].Parts = pp
		}
	}
}

// partText is msText, with the microseconds of an idle queue or an
// instant upload said as 0 ms rather than "0.000141 ms".
func partText(ms float64) string {
	if math.Abs(ms) < 0.01 {
		return "0 ms"
	}
	return msText(ms)
}
