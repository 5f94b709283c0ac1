package metrics

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
)

// CheckSummary counts one named check's evaluations.
type CheckSummary struct {
	Name   string `json:"name"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

// MetricError is one distinct problem with custom metric samples, which
// were left out, and how many samples had it: a kind other than the
// metric's first, an unknown kind, a built-in name, a value that is not a
// finite number.
type MetricError struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// MetricSummary is one custom metric over a stage or the run. Which fields
// apply depends on Kind, and JSON carries only those:
//
//	trend:   {"kind": "trend", <the Dist fields>}
//	counter: {"kind": "counter", "count": Count, "sum": Sum, "rate": PerSec}
//	rate:    {"kind": "rate", "passes": Passes, "total": Total, "rate": Rate}
type MetricSummary struct {
	Kind   string  // engine.MetricTrend, MetricCounter or MetricRate
	Trend  Dist    // trend: values in the script's own unit
	Count  int64   // counter: values added
	Sum    float64 // counter: their total
	PerSec float64 // counter: Sum per second of the window
	Passes int64   // rate: non-zero values
	Total  int64   // rate: all values
	Rate   float64 // rate: Passes / Total
}

type trendJSON struct {
	Kind string `json:"kind"`
	Dist
}

type counterJSON struct {
	Kind  string  `json:"kind"`
	Count int64   `json:"count"`
	Sum   float64 `json:"sum"`
	Rate  float64 `json:"rate"`
}

type rateJSON struct {
	Kind   string  `json:"kind"`
	Passes int64   `json:"passes"`
	Total  int64   `json:"total"`
	Rate   float64 `json:"rate"`
}

// MarshalJSON writes the fields of m's kind only.
func (m MetricSummary) MarshalJSON() ([]byte, error) {
	switch m.Kind {
	case engine.MetricTrend:
		return json.Marshal(trendJSON{m.Kind, m.Trend})
	case engine.MetricCounter:
		return json.Marshal(counterJSON{m.Kind, m.Count, m.Sum, m.PerSec})
	case engine.MetricRate:
		return json.Marshal(rateJSON{m.Kind, m.Passes, m.Total, m.Rate})
	}
	return nil, fmt.Errorf("metrics: metric summary of unknown kind %q", m.Kind)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *MetricSummary) UnmarshalJSON(b []byte) error {
	// "count" lands in the embedded Dist for trends and counters alike,
	// and "rate" serves counters and rates.
	var aux struct {
		trendJSON
		Sum    float64 `json:"sum"`
		Rate   float64 `json:"rate"`
		Passes int64   `json:"passes"`
		Total  int64   `json:"total"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch aux.Kind {
	case engine.MetricTrend:
		*m = MetricSummary{Kind: aux.Kind, Trend: aux.Dist}
	case engine.MetricCounter:
		*m = MetricSummary{Kind: aux.Kind, Count: aux.Count, Sum: aux.Sum, PerSec: aux.Rate}
	case engine.MetricRate:
		*m = MetricSummary{Kind: aux.Kind, Passes: aux.Passes, Total: aux.Total, Rate: aux.Rate}
	default:
		return fmt.Errorf("metrics: metric summary of unknown kind %q", aux.Kind)
	}
	return nil
}

// checkList renders check cells sorted by name.
func checkList(cs map[string]cellSnap) []CheckSummary {
	list := make([]CheckSummary, 0, len(cs))
	for name, c := range cs {
		list = append(list, CheckSummary{Name: name, Passes: c.hits, Fails: c.n - c.hits})
	}
	slices.SortFunc(list, func(x, y CheckSummary) int { return strings.Compare(x.Name, y.Name) })
	return list
}

// metricSummaries renders custom metric cells; secs is their window.
func metricSummaries(cs map[string]cellSnap, secs float64) map[string]MetricSummary {
	out := make(map[string]MetricSummary, len(cs))
	for name, c := range cs {
		out[name] = c.summary(secs)
	}
	return out
}
