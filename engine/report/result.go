// Package report renders a run's results: one Reporter per format, all
// reading the same Result, so aggregation stays in engine/metrics.
package report

import (
	"io"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// SchemaVersion is the version of the JSON result format this package
// writes and reads. It changes whenever a field changes meaning or goes away.
const SchemaVersion = 1

// Result is a whole run as it is written to and read from a result file.
type Result struct {
	SchemaVersion int                    `json:"schema_version"`
	Run           Meta                   `json:"run"`
	Stages        []metrics.StageSummary `json:"stages"`
	ScriptErrors  []metrics.ScriptError  `json:"script_errors"`
	Warmup        metrics.WarmupSummary  `json:"warmup"`
	Checks        []Check                `json:"checks"`
}

// Check is one named llm.check condition over the whole run.
type Check struct {
	Name   string `json:"name"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
}

// SetChecks stores check counts (name → passes, fails), sorted by name.
func (r *Result) SetChecks(counts map[string][2]int64) {
	r.Checks = r.Checks[:0]
	for name, c := range counts {
		r.Checks = append(r.Checks, Check{Name: name, Passes: c[0], Fails: c[1]})
	}
	slices.SortFunc(r.Checks, func(a, b Check) int { return strings.Compare(a.Name, b.Name) })
}

// Meta describes the run as a whole.
type Meta struct {
	Scenario  string    `json:"scenario"` // script path as given
	Target    string    `json:"target"`   // base URL, without credentials
	Model     string    `json:"model"`
	Simulator bool      `json:"simulator"` // the built-in simulator served the run
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Version   string    `json:"version"`  // llmload's version
	Complete  bool      `json:"complete"` // false when the run was interrupted
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
		Checks:        []Check{},
	}
	if s != nil {
		r.Stages = append(r.Stages, s.Stages...)
		for i := range r.Stages {
			r.Stages[i].Start, r.Stages[i].End = r.Stages[i].Start.UTC(), r.Stages[i].End.UTC()
		}
		r.ScriptErrors = append(r.ScriptErrors, s.ScriptErrors...)
		r.Warmup = s.Warmup
	}
	return r
}
