package metrics

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Filter selects samples by tag. "scenario" and "stage" match
// Sample.Scenario and Stage (and the same fields of marks and metric
// samples); any other key matches Tags[key], which must be present.
type Filter map[string]string

// Query asks for one aggregation of one metric over the samples matching
// Filter.
type Query struct {
	Metric string  // built-in or custom metric name
	Filter Filter  // nil or empty: the whole run (all stages, all scenarios)
	Agg    string  // AggAvg, AggMin, AggMax, AggMed, AggP, AggCount or AggRate
	P      float64 // the percentile for AggP, e.g. 99 or 99.9
}

// Aggregations. Trends take avg, min, max, med, p and count (of values);
// counters count (their sum) and rate (sum per second of the window);
// rates rate (share of non-zero values) and count (of non-zero values).
const (
	AggAvg   = "avg"
	AggMin   = "min"
	AggMax   = "max"
	AggMed   = "med"
	AggP     = "p"
	AggCount = "count"
	AggRate  = "rate"
)

var aggsByKind = map[kind][]string{
	kindTrend:   {AggAvg, AggMin, AggMax, AggMed, AggP, AggCount},
	kindCounter: {AggCount, AggRate},
	kindRate:    {AggRate, AggCount},
}

// checkAgg reports why q's aggregation does not apply to a metric of kind k.
func checkAgg(q *Query, k kind) error {
	valid := aggsByKind[k]
	if !slices.Contains(valid, q.Agg) {
		return fmt.Errorf("metrics: %s is a %s: aggregation %q does not apply (valid: %s)",
			q.Metric, k, q.Agg, strings.Join(valid, ", "))
	}
	if q.Agg == AggP && !(q.P >= 0 && q.P <= 100) {
		return fmt.Errorf("metrics: %s: percentile %v is outside 0..100", q.Metric, q.P)
	}
	return nil
}

// value computes agg over c; secs is the window for a counter's rate.
func (c *cellSnap) value(agg string, p, secs float64) float64 {
	if c.n == 0 {
		return 0
	}
	switch agg {
	case AggAvg:
		return c.t.avg()
	case AggMin:
		return c.t.geo.out(c.t.min)
	case AggMax:
		return c.t.geo.out(c.t.max)
	case AggMed:
		return c.t.percentile(50)
	case AggP:
		return c.t.percentile(p)
	case AggCount:
		switch c.kind {
		case kindCounter:
			return c.sum
		case kindRate:
			return float64(c.hits)
		}
		return float64(c.n)
	case AggRate:
		if c.kind == kindCounter {
			// Per second of the windows the requests started in, as the
			// stages' own rates: the graceful-stop tail is left out.
			return perSecond(c.sum-c.tail, secs)
		}
		return ratio(c.hits, c.n)
	}
	return math.NaN() // unreachable: checkAgg vetted agg
}

// intrinsic reports whether a filter key is answered from per-stage data,
// without Track: scenario and stage, a check's name for checks, and the
// dirty-data kind for the dirty.* counters.
func intrinsic(metric, key string) bool {
	switch key {
	case "scenario", "stage":
		return true
	case "check":
		return metric == checksName
	case DirtyKindTag:
		id, ok := builtinIDs[metric]
		return ok && isDirtyMetric(id)
	}
	return false
}

// needsView reports whether f names tags only a tracked view can answer.
func needsView(metric string, f Filter) bool {
	for k := range f {
		if !intrinsic(metric, k) {
			return true
		}
	}
	return false
}

// viewKey names a (metric, filter) pair canonically: keys sorted, keys and
// values quoted so that no tag text can forge another filter's key.
func viewKey(metric string, f Filter) string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(metric)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(strconv.Quote(f[k]))
	}
	b.WriteByte('}')
	return b.String()
}
