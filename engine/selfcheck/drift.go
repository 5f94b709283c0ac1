package selfcheck

import (
	"slices"
	"time"
)

// Bounds of a drift judgement. A load shorter than MinDriftSpan is not
// judged: its warm-up and its end leave too little between them.
const (
	MinDriftSpan = time.Minute
	// DriftLimit is the growth, as a fraction of the early level, beyond
	// which a figure is called growing: a soak's "flat within 10%".
	DriftLimit = 0.10
	// minWarmup and warmupShare make the warm-up left out of the
	// judgement: the larger of the two.
	minWarmup   = 10 * time.Second
	warmupShare = 0.2
)

// Drift compares what the process held early in a long load with what
// it held at its end, after a warm-up in which connections open, pools
// fill and the heap finds its size. Each figure's level is the median of
// its samples in a window (the first and the last third of the span
// after the warm-up), so a garbage collector's sawtooth is not a trend.
type Drift struct {
	// From and To bound the judged span: the end of the warm-up and the
	// last sample.
	From, To time.Time
	// Each figure's early and late level; a figure the platform does not
	// give is left out (Measured false).
	RSS, HeapLive, Goroutines, OpenFiles Change
}

// Change is one figure's early and late level.
type Change struct {
	Measured    bool
	Early, Late float64
	// Growing: Late is above Early by more than DriftLimit of it and by
	// more than the figure's noise floor (a few goroutines or files, a
	// few MB), so a tiny load's +1 is not a leak.
	Growing bool
}

// Percent is the change from Early to Late in percent of Early.
func (c Change) Percent() float64 {
	if c.Early == 0 {
		return 0
	}
	return 100 * (c.Late - c.Early) / c.Early
}

type namedChange struct {
	name string
	c    *Change
}

func (d *Drift) figures() []namedChange {
	return []namedChange{{"RSS", &d.RSS}, {"live heap", &d.HeapLive}, {"goroutines", &d.Goroutines}, {"open files", &d.OpenFiles}}
}

// floors are each figure's noise: growth up to it is never a leak.
var floors = [4]float64{8 << 20, 4 << 20, 16, 8}

// JudgeDrift judges the samples taken within [start, end], the load's
// span; nil when the span is shorter than MinDriftSpan or holds fewer
// than ten samples after its warm-up.
func JudgeDrift(samples []Resources, start, end time.Time) *Drift {
	span := end.Sub(start)
	if span < MinDriftSpan {
		return nil
	}
	from := start.Add(max(minWarmup, time.Duration(warmupShare*float64(span))))
	var in []Resources
	for _, s := range samples {
		if !s.At.Before(from) && !s.At.After(end) {
			in = append(in, s)
		}
	}
	if len(in) < 10 {
		return nil
	}
	third := len(in) / 3
	early, late := in[:third], in[len(in)-third:]
	d := &Drift{From: from, To: in[len(in)-1].At}
	get := []func(Resources) int64{
		func(r Resources) int64 { return r.RSS },
		func(r Resources) int64 { return r.HeapLive },
		func(r Resources) int64 { return r.Goroutines },
		func(r Resources) int64 { return r.OpenFiles },
	}
	for i, f := range d.figures() {
		e, eok := median(early, get[i])
		l, lok := median(late, get[i])
		if !eok || !lok {
			continue
		}
		*f.c = Change{Measured: true, Early: e, Late: l}
		f.c.Growing = l-e > DriftLimit*e && l-e > floors[i]
	}
	return d
}

// median is the median of get over rs; false when any value is missing.
func median(rs []Resources, get func(Resources) int64) (float64, bool) {
	v := make([]float64, 0, len(rs))
	for _, r := range rs {
		x := get(r)
		if x < 0 {
			return 0, false
		}
		v = append(v, float64(x))
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2], true
	}
	return (v[n/2-1] + v[n/2]) / 2, true
}
