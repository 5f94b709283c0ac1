// Package report renders a run's results: one Reporter per format, all
// reading the same Result, so aggregation stays in engine/metrics.
package report

import (
	"io"
	"maps"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/threshold"
)

// SchemaVersion is the version of the JSON result format this package
// writes and reads. It changes whenever a field changes meaning or goes away.
const SchemaVersion = 1

// Result is a whole run as it is written to and read from a result file.
type Result struct {
	SchemaVersion int                              `json:"schema_version"`
	Run           Meta                             `json:"run"`
	Stages        []metrics.StageSummary           `json:"stages"`
	ScriptErrors  []metrics.ScriptError            `json:"script_errors"`
	Warmup        metrics.WarmupSummary            `json:"warmup"`
	Checks        []metrics.CheckSummary           `json:"checks"`
	Metrics       map[string]metrics.MetricSummary `json:"metrics"`
	MetricErrors  []metrics.MetricError            `json:"metric_errors"`
	Thresholds    []threshold.Result               `json:"thresholds"`
	// Warnings say where the results cannot be taken at face value: the
	// generator fell behind its schedule, or iterations were dropped.
	Warnings []string `json:"warnings"`
}

// Meta describes the run as a whole.
type Meta struct {
	Scenario  string    `json:"scenario"` // script path as given
	Target    string    `json:"target"`   // base URL, without credentials
	Model     string    `json:"model"`
	Simulator bool      `json:"simulator"` // the built-in simulator served the run
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Version   string    `json:"version"`           // llmload's version
	Complete  bool      `json:"complete"`          // false when the run was interrupted
	Aborted   string    `json:"aborted,omitempty"` // why a threshold stopped the run
	Seed      int64     `json:"seed"`
}

// Reporter writes one rendering of a result.
type Reporter func(w io.Writer) error

// New builds a Result from a run's metadata and summary; s may be nil for
// a run that measured nothing. The target is redacted again here, because a
// leaked credential in a result file is worse than a redundant check.
// Times are converted to UTC, which also drops monotonic clock readings, so
// that a Result equals what ReadJSON later reads back.
func New(meta Meta, s *metrics.Summary) *Result {
	meta.Target = engine.RedactURL(meta.Target)
	meta.Start, meta.End = meta.Start.UTC(), meta.End.UTC()
	r := &Result{
		SchemaVersion: SchemaVersion,
		Run:           meta,
		Stages:        []metrics.StageSummary{},
		ScriptErrors:  []metrics.ScriptError{},
		Checks:        []metrics.CheckSummary{},
		Metrics:       map[string]metrics.MetricSummary{},
		MetricErrors:  []metrics.MetricError{},
		Thresholds:    []threshold.Result{},
	}
	if s != nil {
		r.Stages = append(r.Stages, s.Stages...)
		for i := range r.Stages {
			r.Stages[i].Start, r.Stages[i].End = r.Stages[i].Start.UTC(), r.Stages[i].End.UTC()
		}
		r.ScriptErrors = append(r.ScriptErrors, s.ScriptErrors...)
		r.Warmup = s.Warmup
		r.Checks = append(r.Checks, s.Checks...)
		maps.Copy(r.Metrics, s.Metrics)
		r.MetricErrors = append(r.MetricErrors, s.MetricErrors...)
	}
	r.Warnings = warnings(r.Stages)
	return r
}
