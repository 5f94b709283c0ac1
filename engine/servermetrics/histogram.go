package servermetrics

import (
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// histogram is a classic Prometheus histogram summed over its label sets:
// cumulative counts by ascending upper bound, the last bound +Inf.
type histogram struct {
	les []float64
	cum []float64
}

// mergeHistogram sums a family's histograms bucket by bucket (buckets with
// the same upper bound add up, which is exact when the label sets share a
// layout, as one server's do). ok is false when the family holds none.
func mergeHistogram(mf *dto.MetricFamily) (h histogram, ok bool) {
	byLE := map[float64]float64{}
	var count float64
	for _, m := range mf.GetMetric() {
		mh := m.GetHistogram()
		if mh == nil {
			continue
		}
		ok = true
		count += sampleCount(mh)
		for _, b := range mh.GetBucket() {
			if le := b.GetUpperBound(); !math.IsNaN(le) {
				byLE[le] += cumulativeCount(b)
			}
		}
	}
	if !ok {
		return histogram{}, false
	}
	if _, has := byLE[math.Inf(1)]; !has { // implicit, as protobuf exposition leaves it out
		byLE[math.Inf(1)] = count
	}
	for le := range byLE {
		h.les = append(h.les, le)
	}
	slices.Sort(h.les)
	for _, le := range h.les {
		h.cum = append(h.cum, byLE[le])
	}
	return h, true
}

func sampleCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

func cumulativeCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

// total is the number of observations.
func (h histogram) total() float64 { return h.cum[len(h.cum)-1] }

// since is what was observed between prev and h. A count that went down, or
// a changed bucket layout, means the server restarted in between: then h
// holds only observations since the restart, and is the answer.
func (h histogram) since(prev histogram) histogram {
	if !slices.Equal(h.les, prev.les) {
		return h
	}
	d := histogram{les: h.les, cum: make([]float64, len(h.cum))}
	for i := range h.cum {
		d.cum[i] = h.cum[i] - prev.cum[i]
		if d.cum[i] < 0 {
			return h
		}
	}
	return d
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile
// does: linear interpolation inside the bucket that holds the rank, from 0
// for the first bucket, and the highest finite bound when the rank falls
// in the +Inf bucket. ok is false without observations or finite bounds.
func (h histogram) quantile(q float64) (v float64, ok bool) {
	total := h.total()
	if total <= 0 || len(h.les) < 2 {
		return 0, false
	}
	rank := q * total
	i, _ := slices.BinarySearchFunc(h.cum, rank, func(c, r float64) int {
		if c < r {
			return -1
		}
		return 1
	})
	if i >= len(h.les)-1 { // the +Inf bucket
		return h.les[len(h.les)-2], true
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.les[i-1], h.cum[i-1]
	} else if h.les[0] <= 0 {
		return h.les[0], true
	}
	in := h.cum[i] - below
	if in <= 0 {
		return h.les[i], true
	}
	return lower + (h.les[i]-lower)*(rank-below)/in, true
}
