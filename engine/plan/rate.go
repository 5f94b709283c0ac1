package plan

import "time"

// StageLoad is one stage's load over time: it moves linearly from From to
// To over Ramp, then holds To for Hold. The load is VUs (closed model) or
// iterations per second (open model). It is the one definition of a
// stage's shape that schedules, stage marks and plan reports share, so
// they cannot disagree.
type StageLoad struct {
	From, To   float64
	Ramp, Hold time.Duration
}

// LoadOf is the shape of stage st entered at level from, target its level
// (st.Target or st.Rate, in the caller's unit). A ramp's slope is
// (target − from) / st.Ramp; a ramp longer than its stage ends part-way,
// at the level that slope reached when the stage ended, and the next stage
// starts from there. Negative durations count as zero.
func LoadOf(from, target float64, st Stage) StageLoad {
	dur := max(st.Duration, 0)
	ramp := min(max(st.Ramp, 0), dur)
	if ramp == 0 {
		return StageLoad{From: target, To: target, Hold: dur}
	}
	to := target
	if st.Ramp > dur {
		to = from + (target-from)*ramp.Seconds()/st.Ramp.Seconds()
	}
	return StageLoad{From: from, To: to, Ramp: ramp, Hold: dur - ramp}
}

// Duration is the stage's length, ramp included.
func (l StageLoad) Duration() time.Duration { return l.Ramp + l.Hold }

// Integral is ∫ load dt over the stage, in load·seconds: for a rate in
// iterations per second, the arrivals to expect.
func (l StageLoad) Integral() float64 {
	return (l.From+l.To)/2*l.Ramp.Seconds() + l.To*l.Hold.Seconds()
}

// Mean is the load averaged over the stage, ramp included, so that
// Mean × Duration = Integral; a stage of no length has its level To.
func (l StageLoad) Mean() float64 {
	if d := l.Duration(); d > 0 {
		return l.Integral() / d.Seconds()
	}
	return l.To
}

// At is the load at offset off into the stage (clamped to the stage).
func (l StageLoad) At(off time.Duration) float64 {
	if off >= l.Ramp {
		return l.To
	}
	if off <= 0 {
		return l.From
	}
	return l.From + (l.To-l.From)*off.Seconds()/l.Ramp.Seconds()
}

// StageLoads is each stage's shape, each entered where the previous one
// ended (the first at StartVUs or StartRate): VUs for closed-model and
// iteration-count executors, iterations per second for open-model ones.
func (s Scenario) StageLoads() []StageLoad {
	open := OpenModel(s.Executor)
	level := func(st Stage) float64 {
		if open {
			return s.RatePerSecond(st.Rate)
		}
		return float64(st.Target)
	}
	prev := float64(s.StartVUs)
	if open {
		prev = s.RatePerSecond(s.StartRate)
	}
	out := make([]StageLoad, len(s.Stages))
	for i, st := range s.Stages {
		out[i] = LoadOf(prev, level(st), st)
		prev = out[i].To
	}
	return out
}

// ExpectedArrivals is ∫ rate dt over an open-model scenario's stages: the
// iterations its schedule starts, on average.
func (s Scenario) ExpectedArrivals() float64 {
	total := 0.0
	for _, l := range s.StageLoads() {
		total += l.Integral()
	}
	return total
}
