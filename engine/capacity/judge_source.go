package capacity

import (
	"errors"
	"fmt"
	"math"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// probeSource answers metric queries over a probe's windows: the union of
// its stages, which a metrics.Filter (one stage at a time) cannot name.
// Counts and shares add up across the stages; a percentile of the union
// is found from the stages' own ranks (see valueAtRank), so it is the one
// a merged histogram would give, within HDR precision. Used by one
// goroutine at a time.
type probeSource struct {
	snap     *metrics.Snapshot
	scenario string
	stages   []string
	// ranks caches values at ranks by stage and metric: a percentile of
	// several stages asks the same ranks many times over.
	ranks map[rankKey]float64
}

type rankKey struct {
	metric string
	stage  int
	rank   int64
}

func newProbeSource(snap *metrics.Snapshot, p Probe) *probeSource {
	return &probeSource{snap: snap, scenario: p.Scenario, stages: p.Stages, ranks: map[rankKey]float64{}}
}

func (s *probeSource) query(metric string, stage int, agg string, p float64) (float64, int64, error) {
	f := metrics.Filter{"scenario": s.scenario, "stage": s.stages[stage]}
	return s.snap.Value(metrics.Query{Metric: metric, Filter: f, Agg: agg, P: p})
}

// errNoProbeRate refuses a counter's rate, which threshold.ParseProbeCondition
// refuses too: a stage's rate divides by its own window, and adding them
// up over the probe's windows would need their lengths.
var errNoProbeRate = errors.New("a counter's rate is not judged per probe")

// Value answers q over the probe's stages; q.Filter is ignored, since a
// probe condition has none. n is the samples behind the value, as
// metrics.Snapshot.Value counts them.
func (s *probeSource) Value(q metrics.Query) (float64, int64, error) {
	kind, ok := s.snap.Kind(q.Metric)
	if !ok {
		return 0, 0, fmt.Errorf("metrics: unknown metric %q", q.Metric)
	}
	switch {
	case kind == engine.MetricTrend && (q.Agg == metrics.AggP || q.Agg == metrics.AggMed):
		p := q.P
		if q.Agg == metrics.AggMed {
			p = 50
		}
		return s.percentile(q.Metric, p)
	case kind == engine.MetricTrend:
		return s.trend(q.Metric, q.Agg)
	case kind == engine.MetricCounter && q.Agg == metrics.AggRate:
		return 0, 0, errNoProbeRate
	case kind == engine.MetricRate:
		hits, n, err := s.share(q.Metric)
		if q.Agg == metrics.AggCount {
			return float64(hits), n, err
		}
		return ratio(hits, n), n, err
	}
	return s.sum(q.Metric, q.Agg)
}

// sum adds an aggregation that adds up: a counter's count (its sum).
func (s *probeSource) sum(metric, agg string) (float64, int64, error) {
	var v float64
	var n int64
	for i := range s.stages {
		x, k, err := s.query(metric, i, agg, 0)
		if err != nil {
			return 0, 0, err
		}
		v, n = v+x, n+k
	}
	return v, n, nil
}

// share counts a rate metric's non-zero values among all its values.
func (s *probeSource) share(metric string) (hits, n int64, err error) {
	for i := range s.stages {
		x, k, err := s.query(metric, i, metrics.AggCount, 0)
		if err != nil {
			return 0, 0, err
		}
		hits, n = hits+int64(math.Round(x)), n+k
	}
	return hits, n, nil
}

// trend combines a trend's count, mean, minimum or maximum.
func (s *probeSource) trend(metric, agg string) (float64, int64, error) {
	var total, weighted float64
	v := math.NaN()
	for i := range s.stages {
		x, k, err := s.query(metric, i, agg, 0)
		if err != nil {
			return 0, 0, err
		}
		if k == 0 {
			continue
		}
		total += float64(k)
		switch {
		case agg == metrics.AggAvg:
			weighted += x * float64(k)
		case agg == metrics.AggMin && !(x >= v):
			v = x
		case agg == metrics.AggMax && !(x <= v):
			v = x
		}
	}
	switch {
	case total == 0:
		return 0, 0, nil
	case agg == metrics.AggCount:
		v = total
	case agg == metrics.AggAvg:
		v = weighted / total
	}
	return v, int64(total), nil
}

// counts returns each stage's number of values of a trend.
func (s *probeSource) counts(metric string) ([]int64, int64, error) {
	ns := make([]int64, len(s.stages))
	var total int64
	for i := range s.stages {
		_, k, err := s.query(metric, i, metrics.AggCount, 0)
		if err != nil {
			return nil, 0, err
		}
		ns[i], total = k, total+k
	}
	return ns, total, nil
}

// percentile is the p-th percentile of the union, ranked as HDR ranks.
func (s *probeSource) percentile(metric string, p float64) (float64, int64, error) {
	ns, n, err := s.counts(metric)
	if err != nil || n == 0 {
		return 0, 0, err
	}
	v, err := s.valueAtRank(metric, ns, metrics.Rank(p, n))
	return v, n, err
}

// valueAtRank returns the r-th smallest value of the union of the stages
// (ns values each). It is the smallest value v of any stage such that at
// least r values of all stages are ≤ v: for each stage a binary search
// over its ranks finds its candidate, counting the values ≤ v in the
// other stages by binary search too. A stage's r-th value is its
// percentile r/n·100, which HDR ranks back to r exactly.
func (s *probeSource) valueAtRank(metric string, ns []int64, r int64) (float64, error) {
	best := math.Inf(1)
	for i, n := range ns {
		if n == 0 {
			continue
		}
		lo, hi := int64(1), n
		for lo < hi {
			mid := lo + (hi-lo)/2
			v, err := s.stageRank(metric, i, n, mid)
			if err != nil {
				return 0, err
			}
			below, err := s.atOrBelow(metric, ns, v)
			if err != nil {
				return 0, err
			}
			if below >= r {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		v, err := s.stageRank(metric, i, n, lo)
		if err != nil {
			return 0, err
		}
		if below, err := s.atOrBelow(metric, ns, v); err != nil {
			return 0, err
		} else if below >= r {
			best = math.Min(best, v)
		}
	}
	if math.IsInf(best, 1) {
		return 0, fmt.Errorf("metrics: %s: no value at rank %d", metric, r)
	}
	return best, nil
}

// atOrBelow counts the values ≤ v over all stages.
func (s *probeSource) atOrBelow(metric string, ns []int64, v float64) (int64, error) {
	var total int64
	for i, n := range ns {
		// The largest rank whose value is ≤ v, 0 when none is.
		lo, hi := int64(0), n
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			x, err := s.stageRank(metric, i, n, mid)
			if err != nil {
				return 0, err
			}
			if x <= v {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		total += lo
	}
	return total, nil
}

// stageRank is stage i's r-th smallest value of n.
func (s *probeSource) stageRank(metric string, i int, n, r int64) (float64, error) {
	key := rankKey{metric, i, r}
	if v, ok := s.ranks[key]; ok {
		return v, nil
	}
	v, _, err := s.query(metric, i, metrics.AggP, float64(r)/float64(n)*100)
	if err != nil {
		return 0, err
	}
	s.ranks[key] = v
	return v, nil
}

// percentileInterval is a 95% confidence interval of the p-th percentile
// of the union, by the distribution-free order statistics of
// metrics.Intervals. Where the interval's rank falls outside the values
// (too few of them to bound the percentile on that side) the bound is
// infinite: no sample shows where the truth lies beyond the extremes.
func (s *probeSource) percentileInterval(metric string, p float64) (lo, hi float64, n int64, err error) {
	ns, n, err := s.counts(metric)
	if err != nil || n == 0 {
		return 0, 0, 0, err
	}
	loRank, hiRank := metrics.IntervalRanks(n, p/100)
	lo, hi = math.Inf(-1), math.Inf(1)
	if loRank >= 1 {
		if lo, err = s.valueAtRank(metric, ns, loRank); err != nil {
			return 0, 0, 0, err
		}
	}
	if hiRank <= n {
		if hi, err = s.valueAtRank(metric, ns, hiRank); err != nil {
			return 0, 0, 0, err
		}
	}
	return lo, hi, n, nil
}

func ratio(hits, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(hits) / float64(n)
}
