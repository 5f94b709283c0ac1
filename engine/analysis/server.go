package analysis

import (
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/servermetrics"
)

// Server is the target's own metrics over a run, which corroborate or
// contradict the client's reading. The zero Server has none.
type Server struct {
	Metrics *servermetrics.Result // nil when the run did not scrape any
	// Start is the origin of the series' times (servermetrics.Series.T):
	// the run's start, report.Meta.Start.
	Start time.Time
}

// queueGauges pair each server's gauge of waiting requests with its gauge
// of running ones (its batch), in the order they are looked for.
var queueGauges = []struct{ waiting, running string }{
	{"vllm:num_requests_waiting", "vllm:num_requests_running"},
	{"sglang:num_queue_reqs", "sglang:num_running_reqs"},
	{"tgi_queue_size", "tgi_batch_current_size"},
	{"llamacpp:requests_deferred", "llamacpp:requests_processing"},
}

// ServerCurve is the server's queue along a sweep: the mean of its waiting
// and running gauges over each load level's window. A mean over the
// window is the time-average queue length, which Little's law ties to
// the wait.
type ServerCurve struct {
	Waiting string        `json:"waiting,omitempty"` // the series read, "" when the server has none
	Running string        `json:"running,omitempty"`
	Levels  []ServerLevel `json:"levels"` // one per sweep point
}

// ServerLevel is one load level's gauge means; nil where no scrape fell
// within the window.
type ServerLevel struct {
	Stage   string   `json:"stage"`
	Load    float64  `json:"load"`
	Waiting *float64 `json:"waiting,omitempty"`
	Running *float64 `json:"running,omitempty"`
}

// curve reads the server's queue gauges over each point of s (its
// scenario's stages among stages, in the same order); nil when the server
// exposed none of them or no scrape fell within any window.
func (sv Server) curve(s Sweep, stages []metrics.StageSummary) *ServerCurve {
	if sv.Metrics == nil || sv.Start.IsZero() {
		return nil
	}
	mine := scenarioStages(stages, s.Scenario)
	for _, g := range queueGauges {
		waiting, running := sv.Metrics.Lookup(g.waiting), sv.Metrics.Lookup(g.running)
		if waiting == nil && running == nil {
			continue
		}
		c := &ServerCurve{}
		seen := false
		for i, st := range mine {
			from, to := st.Start.Sub(sv.Start).Seconds(), st.End.Sub(sv.Start).Seconds()
			l := ServerLevel{Stage: st.Stage, Load: s.Points[i].Load, Waiting: meanWithin(waiting, from, to), Running: meanWithin(running, from, to)}
			seen = seen || l.Waiting != nil || l.Running != nil
			c.Levels = append(c.Levels, l)
		}
		if !seen {
			return nil
		}
		if waiting != nil {
			c.Waiting = g.waiting
		}
		if running != nil {
			c.Running = g.running
		}
		return c
	}
	return nil
}

// meanWithin is the mean of s's values at times in [from, to]; nil when
// none is (or s is nil).
func meanWithin(s *servermetrics.Series, from, to float64) *float64 {
	if s == nil {
		return nil
	}
	sum, n := 0.0, 0
	for i, t := range s.T {
		if t >= from && t <= to && i < len(s.V) {
			sum += s.V[i]
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}
