// Package compare sets two result files side by side, stage by stage, and
// gates on regressions: a metric that got worse by more than a bound and
// by more than the noise of either measurement. Its reporters render the
// comparison for a terminal, a CI comment (Markdown) or a machine (JSON).
package compare

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/report"
)

// Options says what Compare reads and how much worse is too much.
type Options struct {
	// MaxRegression is the relative change beyond which a significant
	// worsening is a regression: 0.20 = 20%. Zero makes every significant
	// worsening one.
	MaxRegression float64
	Metrics       []string // default DefaultMetrics
}

// Row is one metric of one stage in both files.
type Row struct {
	Stage     string  `json:"stage"` // "scenario/stage"
	Metric    string  `json:"metric"`
	Base      float64 `json:"base"`
	New       float64 `json:"new"`
	ChangePct float64 `json:"change_pct"` // 0 when Base is 0 (see Note)
	// Worse is direction-aware: latency or errors up, throughput down.
	Worse bool `json:"worse"`
	// Significant is false when the change is within the noise: the two
	// 95% intervals overlap, or, without intervals, too few samples.
	Significant bool `json:"significant"`
	// Regression is Worse && Significant && |ChangePct| > MaxRegression×100
	// (any significant rise from a base of 0 counts).
	Regression bool   `json:"regression"`
	NoData     bool   `json:"no_data,omitempty"` // a side had no value: nothing was compared
	Note       string `json:"note,omitempty"`
}

// Result is a whole comparison. Base and New label the two files; Compare
// fills them from each run's scenario and start time, and callers may set
// them to file names.
type Result struct {
	Base          string   `json:"base"`
	New           string   `json:"new"`
	MaxRegression float64  `json:"max_regression"`
	Matched       []string `json:"matched"` // "scenario/stage" in both, in base's order
	OnlyBase      []string `json:"only_base"`
	OnlyNew       []string `json:"only_new"`
	Rows          []Row    `json:"rows"`
	Regressions   int      `json:"regressions"`
}

// Passed reports whether the comparison found no regression.
func (r *Result) Passed() bool { return r.Regressions == 0 }

// ErrNoCommonStage is returned, wrapped with both files' stage lists, when
// the two results share no "scenario/stage".
var ErrNoCommonStage = errors.New("the two results have no stage in common")

// Compare matches the stages of base and new by "scenario/stage" and
// compares each metric of o.Metrics in every matched stage.
func Compare(base, new *report.Result, o Options) (*Result, error) {
	if base == nil || new == nil {
		return nil, errors.New("compare: missing result")
	}
	if math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) || o.MaxRegression < 0 {
		return nil, fmt.Errorf("compare: max regression %v must be a finite fraction >= 0 (0.2 = 20%%)", o.MaxRegression)
	}
	ms, err := resolve(o.Metrics)
	if err != nil {
		return nil, err
	}
	baseIdx, newIdx := index(base.Stages), index(new.Stages)
	r := &Result{Base: label(base), New: label(new), MaxRegression: o.MaxRegression,
		Matched: []string{}, OnlyBase: []string{}, OnlyNew: []string{}, Rows: []Row{}}
	for _, k := range baseIdx.keys {
		if _, ok := newIdx.byKey[k]; ok {
			r.Matched = append(r.Matched, k)
		} else {
			r.OnlyBase = append(r.OnlyBase, k)
		}
	}
	for _, k := range newIdx.keys {
		if _, ok := baseIdx.byKey[k]; !ok {
			r.OnlyNew = append(r.OnlyNew, k)
		}
	}
	if len(r.Matched) == 0 {
		return nil, fmt.Errorf("%w: base has [%s], new has [%s]", ErrNoCommonStage,
			strings.Join(baseIdx.keys, ", "), strings.Join(newIdx.keys, ", "))
	}
	for _, k := range r.Matched {
		for _, m := range ms {
			row := compareOne(k, m, m.read(baseIdx.byKey[k], base), m.read(newIdx.byKey[k], new), o.MaxRegression)
			if row.Regression {
				r.Regressions++
			}
			r.Rows = append(r.Rows, row)
		}
	}
	return r, nil
}

func resolve(names []string) ([]metric, error) {
	if len(names) == 0 {
		names = DefaultMetrics
	}
	out := make([]metric, 0, len(names))
	for _, n := range names {
		m, err := lookup(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// stageIndex finds a result's stages by "scenario/stage"; the first of
// duplicate keys wins.
type stageIndex struct {
	keys  []string
	byKey map[string]*metrics.StageSummary
}

func index(stages []metrics.StageSummary) stageIndex {
	x := stageIndex{byKey: map[string]*metrics.StageSummary{}}
	for i := range stages {
		k := stages[i].Scenario + "/" + stages[i].Stage
		if _, dup := x.byKey[k]; !dup {
			x.keys = append(x.keys, k)
			x.byKey[k] = &stages[i]
		}
	}
	return x
}

// label names a result by its script and start time.
func label(r *report.Result) string {
	name := r.Run.Scenario
	if name == "" {
		name = "result"
	}
	if r.Run.Start.IsZero() {
		return name
	}
	return name + " @ " + r.Run.Start.UTC().Truncate(time.Second).Format(time.RFC3339)
}
