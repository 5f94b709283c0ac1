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

// curve reads the server's queue over each point of s (its scenario's
// stages among stages, in the same order): the series with the waiting
// and running roles, whichever server exposed them; nil when the server
// has neither or no scrape fell within any window.
func (sv Server) curve(s Sweep, stages []metrics.StageSummary) *ServerCurve {
	if sv.Metrics == nil || sv.Start.IsZero() {
		return nil
	}
	waiting, running := sv.Metrics.ByRole(servermetrics.RoleWaiting), sv.Metrics.ByRole(servermetrics.RoleRunning)
	if waiting == nil && running == nil {
		return nil
	}
	c := &ServerCurve{Waiting: nameOf(waiting), Running: nameOf(running)}
	seen := false
	for i, st := range scenarioStages(stages, s.Scenario) {
		from, to := st.Start.Sub(sv.Start).Seconds(), st.End.Sub(sv.Start).Seconds()
		l := ServerLevel{Stage: st.Stage, Load: s.Points[i].Load, Waiting: meanWithin(waiting, from, to), Running: meanWithin(running, from, to)}
		seen = seen || l.Waiting != nil || l.Running != nil
		c.Levels = append(c.Levels, l)
	}
	if !seen {
		return nil
	}
	return c
}

// nameOf is a series' name; "" for none.
func nameOf(s *servermetrics.Series) string {
	if s == nil {
		return ""
	}
	return s.Name
}

// meanWithin is the mean of s's values at times in (from, to]; nil when
// none is (or s is nil).
func meanWithin(s *servermetrics.Series, from, to float64) *float64 {
	if s == nil {
		return nil
	}
	if m, ok := s.Mean(from, to); ok {
		return &m
	}
	return nil
}
