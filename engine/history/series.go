package history

import (
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine/compare"
	"github.com/llmload/llmload/engine/result"
)

// Point is one run's value of a metric.
type Point struct {
	Run    Run
	Figure compare.Figure
}

// Series is one metric of one stage across runs, oldest first.
type Series struct {
	Metric    string
	Stage     string // "scenario/stage"
	Unit      string
	HigherBad bool
	Points    []Point // the runs with a value, oldest first
}

// Trend reads metric from each stage of runs and their results (newest
// first, as Results returns them) into one Series per stage, oldest run
// first. stage keeps one stage: "scenario/stage", or a stage name that
// only one scenario has; "" keeps all.
func Trend(runs []Run, results []*result.Result, metric, stage string) ([]Series, error) {
	var order []string
	byStage := map[string]*Series{}
	for i := len(runs) - 1; i >= 0; i-- {
		r := results[i]
		for j := range r.Stages {
			st := &r.Stages[j]
			key := st.Scenario + "/" + st.Stage
			if stage != "" && stage != key && stage != st.Stage {
				continue
			}
			f, err := compare.FigureOf(metric, st, r)
			if err != nil {
				return nil, fmt.Errorf("run %d, stage %s: %w", runs[i].ID, key, err)
			}
			s := byStage[key]
			if s == nil {
				s = &Series{Metric: metric, Stage: key, Unit: f.Unit, HigherBad: f.HigherBad}
				byStage[key] = s
				order = append(order, key)
			}
			if f.OK {
				s.Points = append(s.Points, Point{Run: runs[i], Figure: f})
			}
		}
	}
	if stage != "" && len(order) > 1 {
		return nil, fmt.Errorf("--stage %q: several scenarios have that stage (%s): name one as scenario/stage", stage, strings.Join(order, ", "))
	}
	out := make([]Series, len(order))
	for i, k := range order {
		out[i] = *byStage[k]
	}
	return out, nil
}

// Stages lists the "scenario/stage" names of results, in first-seen
// order, for a message naming what --stage could have been.
func Stages(results []*result.Result) []string {
	var out []string
	seen := map[string]bool{}
	for i := len(results) - 1; i >= 0; i-- {
		for _, st := range results[i].Stages {
			k := st.Scenario + "/" + st.Stage
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}
