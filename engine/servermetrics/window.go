package servermetrics

import "math"

// Mean is the mean of the series' values at times in (from, to] (seconds
// since the run start); ok is false when none is. For a gauge sampled at
// a steady interval it is the time average, which Little's law ties to
// the wait; for a rate, the rate over the window.
func (s *Series) Mean(from, to float64) (v float64, ok bool) {
	sum, n := 0.0, 0
	s.each(from, to, func(x float64) { sum += x; n++ })
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Max is the largest of the series' values at times in (from, to]; ok is
// false when none is.
func (s *Series) Max(from, to float64) (v float64, ok bool) {
	v = math.Inf(-1)
	s.each(from, to, func(x float64) { v, ok = math.Max(v, x), true })
	if !ok {
		return 0, false
	}
	return v, true
}

// Min is the smallest of the series' values at times in (from, to]; ok
// is false when none is.
func (s *Series) Min(from, to float64) (v float64, ok bool) {
	v = math.Inf(1)
	s.each(from, to, func(x float64) { v, ok = math.Min(v, x), true })
	if !ok {
		return 0, false
	}
	return v, true
}

// Within summarises the series over (from, to]: a tail quantile by its
// worst scrape interval, which bounds the window's own p99 where a mean of
// interval p99s would hide a burst, anything else by its mean.
func (s *Series) Within(from, to float64) (float64, bool) {
	if RoleOf(s).IsTail() {
		return s.Max(from, to)
	}
	return s.Mean(from, to)
}

// each calls f with every value at a time in (from, to]. A point at t
// covers the scrape interval that ended at t (a rate's, a quantile's), so
// a point at a window's very start belongs to the window before.
func (s *Series) each(from, to float64, f func(float64)) {
	for i, t := range s.T {
		if t > from && t <= to && i < len(s.V) {
			f(s.V[i])
		}
	}
}
