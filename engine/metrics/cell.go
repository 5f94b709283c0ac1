package metrics

import "time"

// cell accumulates one metric of one kind: a trend's distribution, a
// counter's sum or a rate's share of non-zero values. Owned by the
// aggregator goroutine.
type cell struct {
	kind kind
	rec  recorder // trends only
	sum  float64  // counters: the total
	tail float64  // counters: what requests started in a graceful-stop tail added to sum
	n    int64    // counters: values added; rates: values evaluated
	hits int64    // rates: non-zero values
}

func newCell(k kind, g geometry) cell { return cell{kind: k, rec: newRecorder(g)} }

// add records one value of any kind; trends get custom-metric resolution.
func (c *cell) add(v float64) {
	switch c.kind {
	case kindTrend:
		c.rec.recordValue(v)
		return
	case kindRate:
		if v != 0 {
			c.hits++
		}
	}
	c.sum += v
	c.n++
}

// addDuration records one latency into a trend cell.
func (c *cell) addDuration(d time.Duration) { c.rec.record(d) }

// addSet records d unless it is zero, which engine.Result uses for "not
// measured".
func (c *cell) addSet(d time.Duration) { c.rec.recordSet(d) }

func (c *cell) snap(share bool) cellSnap {
	s := cellSnap{kind: c.kind, sum: c.sum, tail: c.tail, n: c.n, hits: c.hits}
	if c.kind == kindTrend {
		s.t = c.rec.freeze(share)
		s.n = s.t.n
	}
	return s
}

// cellSnap is an immutable copy of a cell, as snapshots hold it. n is the
// number of values behind it for every kind.
type cellSnap struct {
	kind kind
	t    *trend
	sum  float64
	tail float64 // of sum, from the graceful-stop tail: counted, but not in a rate
	n    int64
	hits int64
}

// mergeCells combines cells of one metric; the inputs are not modified.
func mergeCells(k kind, cs []cellSnap) cellSnap {
	out := cellSnap{kind: k}
	var ts []*trend
	for _, c := range cs {
		out.sum += c.sum
		out.tail += c.tail
		out.n += c.n
		out.hits += c.hits
		if c.t != nil {
			ts = append(ts, c.t)
		}
	}
	if k == kindTrend {
		out.t = mergeTrends(ts)
	}
	return out
}

// summary renders a custom metric's cell; secs is its window, for a
// counter's rate per second.
func (c cellSnap) summary(secs float64) MetricSummary {
	m := MetricSummary{Kind: c.kind.String()}
	switch c.kind {
	case kindTrend:
		m.Trend = c.t.dist()
	case kindCounter:
		m.Count, m.Sum, m.PerSec = c.n, c.sum, perSecond(c.sum, secs)
	case kindRate:
		m.Passes, m.Total, m.Rate = c.hits, c.n, ratio(c.hits, c.n)
	}
	return m
}

func perSecond(x, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return x / secs
}

func ratio(hits, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(hits) / float64(n)
}
