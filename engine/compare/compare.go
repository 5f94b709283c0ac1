// Package compare sets two result files side by side, stage by stage, and
// gates on regressions: a metric that got worse by more than a bound, and
// significantly so by an exact test on the two files' data (HDR
// histograms for percentiles, counts for rates and errors, moments for
// means). A row the data cannot decide is inconclusive, never passed as
// noise. Its reporters render the comparison for a terminal, a CI comment
// (Markdown) or a machine (JSON).
//
// The tests, for a percentile q: let t be BASE's q-percentile, its r-th
// largest of m values. If NEW's n values come from BASE's distribution,
// the number B of them above t has the exact, distribution-free law
// P(B=b) = C(b+r−1, b)·C(n−b+m−r, n−b)/C(m+n, n), so "worse" is
// P(B ≥ b_observed) < Alpha. "Within the bound" is the same test against
// t×(1+bound): under a scale shift of exactly the bound NEW/(1+bound) and
// BASE are exchangeable, and P(B ≤ b_observed) < WithinAlpha excludes a
// worsening that large. Rates are two Poisson counts (given their sum,
// NEW's is binomial in its share of the time), error rates Fisher's exact
// test, means Welch's t test; a maximum has no test.
package compare

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// Options says what Compare reads and how much worse is too much.
type Options struct {
	// MaxRegression is the relative change beyond which a significant
	// worsening is a regression: 0.20 = 20%. Zero makes every significant
	// worsening one.
	MaxRegression float64
	Metrics       []string // default DefaultMetrics
	// Alpha is the one-sided level at which a row is significantly worse
	// (or better); 0 means DefaultAlpha.
	Alpha float64
	// WithinAlpha is the level at which the data must exclude a
	// worsening beyond MaxRegression before a row may pass as same,
	// better or worse within the bound; 0 means DefaultWithinAlpha.
	WithinAlpha float64
	// MaxCapacityDrop is the relative drop of a capacity search's result
	// beyond which it is a regression: 0.10 = 10%. Zero makes every drop
	// the intervals show one.
	MaxCapacityDrop float64
}

// DefaultAlpha keeps a whole default comparison's false-alarm rate low:
// 4 stages × 5 metrics is 20 tests, and TestFalseAlarmRate measures the
// rate of at least one false REGRESSION on identical servers.
const DefaultAlpha = 0.001

// DefaultWithinAlpha is the level of "the change is within the bound": a
// row that cannot exclude a worsening beyond the bound at 95% confidence
// is inconclusive.
const DefaultWithinAlpha = 0.05

// Row is one metric of one stage in both files.
type Row struct {
	Stage     string  `json:"stage"` // "scenario/stage"
	Metric    string  `json:"metric"`
	Base      float64 `json:"base"`
	New       float64 `json:"new"`
	ChangePct float64 `json:"change_pct"` // 0 when Base is 0 (see Note)
	// Worse is direction-aware: latency or errors up, throughput down.
	Worse bool `json:"worse"`
	// Significant is true when the test found NEW worse or better at
	// Alpha (files without histograms: the two 95% intervals are apart).
	Significant bool `json:"significant"`
	// Regression is Worse && significantly worse && |ChangePct| >
	// MaxRegression×100 (any significant rise from a base of 0 counts).
	Regression bool   `json:"regression"`
	NoData     bool   `json:"no_data,omitempty"` // a side had no value: nothing was compared
	Note       string `json:"note,omitempty"`
	// Decision is the row's verdict, one of the Verdict constants.
	Decision string `json:"verdict"`
	// Inconclusive is true when the data cannot decide: worse beyond the
	// bound but not significantly, or unable to exclude a worsening
	// beyond the bound.
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Test names the test behind the p-values: exceedance, welch,
	// poisson, fisher, intervals (no histograms); absent when none ran.
	Test string `json:"test,omitempty"`
	// PValue is the one-sided p-value of "NEW is worse".
	PValue *float64 `json:"p_value,omitempty"`
	// PWithin is the p-value of "NEW is worse by the bound or more":
	// below WithinAlpha the data exclude a regression.
	PWithin *float64 `json:"p_within,omitempty"`
}

// Result is a whole comparison. Base and New label the two files; Compare
// fills them from each run's scenario and start time, and callers may set
// them to file names.
type Result struct {
	Base          string   `json:"base"`
	New           string   `json:"new"`
	MaxRegression float64  `json:"max_regression"`
	Alpha         float64  `json:"alpha"`
	WithinAlpha   float64  `json:"within_alpha"`
	Matched       []string `json:"matched"` // "scenario/stage" in both, in base's order
	OnlyBase      []string `json:"only_base"`
	OnlyNew       []string `json:"only_new"`
	Rows          []Row    `json:"rows"`
	Regressions   int      `json:"regressions"`
	Inconclusive  int      `json:"inconclusive"` // rows the data could not decide
	// Capacity compares the capacity searches (whose probe stages are
	// not matched stage by stage); absent when neither file has one.
	Capacity             []CapacityRow `json:"capacity,omitempty"`
	MaxCapacityDrop      float64       `json:"max_capacity_drop,omitempty"`
	CapacityRegressions  int           `json:"capacity_regressions,omitempty"`
	CapacityInconclusive int           `json:"capacity_inconclusive,omitempty"`
}

// Passed reports whether the comparison found no regression, of a stage's
// metric or of a capacity.
func (r *Result) Passed() bool { return r.Regressions == 0 && r.CapacityRegressions == 0 }

// Conclusive reports whether the data decided every compared row.
func (r *Result) Conclusive() bool { return r.Inconclusive == 0 && r.CapacityInconclusive == 0 }

// ErrNoCommonStage is returned, wrapped with both files' stage lists, when
// the two results share no "scenario/stage".
var ErrNoCommonStage = errors.New("the two results have no stage in common")

// Compare matches the stages of base and new by "scenario/stage" and
// compares each metric of o.Metrics in every matched stage, and compares
// the capacity each capacity search found (see CapacityRow).
func Compare(base, new *result.Result, o Options) (*Result, error) {
	if base == nil || new == nil {
		return nil, errors.New("compare: missing result")
	}
	if math.IsNaN(o.MaxRegression) || math.IsInf(o.MaxRegression, 0) || o.MaxRegression < 0 {
		return nil, fmt.Errorf("compare: max regression %v must be a finite fraction >= 0 (0.2 = 20%%)", o.MaxRegression)
	}
	if !(o.MaxCapacityDrop >= 0 && o.MaxCapacityDrop < 1) {
		return nil, fmt.Errorf("compare: max capacity drop %v must be a fraction in [0, 1) (0.1 = 10%%)", o.MaxCapacityDrop)
	}
	lv, err := o.levels()
	if err != nil {
		return nil, err
	}
	ms, err := resolve(o.Metrics)
	if err != nil {
		return nil, err
	}
	probes := capacityScenarios(base, new)
	baseIdx, newIdx := index(base.Stages, probes), index(new.Stages, probes)
	r := &Result{Base: label(base), New: label(new), MaxRegression: o.MaxRegression, Alpha: lv.alpha, WithinAlpha: lv.within,
		Matched: []string{}, OnlyBase: []string{}, OnlyNew: []string{}, Rows: []Row{}}
	if len(probes) > 0 {
		r.MaxCapacityDrop = o.MaxCapacityDrop
		r.Capacity = compareCapacities(base, new, o.MaxCapacityDrop)
		for _, row := range r.Capacity {
			r.CapacityRegressions += b2i(row.Regression)
			r.CapacityInconclusive += b2i(row.Inconclusive)
		}
	}
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
	if len(r.Matched) == 0 && len(r.Capacity) == 0 {
		return nil, fmt.Errorf("%w: base has [%s], new has [%s]", ErrNoCommonStage,
			strings.Join(baseIdx.keys, ", "), strings.Join(newIdx.keys, ", "))
	}
	for _, k := range r.Matched {
		for _, m := range ms {
			b, n := m.read(baseIdx.byKey[k], base), m.read(newIdx.byKey[k], new)
			if err := cmp.Or(b.err, n.err); err != nil {
				side := map[bool]string{true: "base", false: "new"}[b.err != nil]
				return nil, fmt.Errorf("compare: %s %s in %s: %w", k, m.name, side, err)
			}
			row := compareOne(k, m, b, n, o.MaxRegression, lv)
			if row.Regression {
				r.Regressions++
			}
			if row.Inconclusive {
				r.Inconclusive++
			}
			r.Rows = append(r.Rows, row)
		}
	}
	return r, nil
}

// levels validates the significance levels, filling in the defaults.
func (o Options) levels() (levels, error) {
	lv := levels{alpha: cmp.Or(o.Alpha, DefaultAlpha), within: cmp.Or(o.WithinAlpha, DefaultWithinAlpha)}
	if !(lv.alpha > 0 && lv.alpha < 0.5) || !(lv.within > 0 && lv.within < 0.5) {
		return levels{}, fmt.Errorf("compare: significance levels %v and %v must lie in (0, 0.5)", lv.alpha, lv.within)
	}
	return lv, nil
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
// duplicate keys wins. Stages of the skipped scenarios are left out.
type stageIndex struct {
	keys  []string
	byKey map[string]*metrics.StageSummary
}

func index(stages []metrics.StageSummary, skip map[string]bool) stageIndex {
	x := stageIndex{byKey: map[string]*metrics.StageSummary{}}
	for i := range stages {
		if skip[stages[i].Scenario] {
			continue
		}
		k := stages[i].Scenario + "/" + stages[i].Stage
		if _, dup := x.byKey[k]; !dup {
			x.keys = append(x.keys, k)
			x.byKey[k] = &stages[i]
		}
	}
	return x
}

// label names a result by its script and start time.
func label(r *result.Result) string {
	name := r.Run.Scenario
	if name == "" {
		name = "result"
	}
	if r.Run.Start.IsZero() {
		return name
	}
	return name + " @ " + r.Run.Start.UTC().Truncate(time.Second).Format(time.RFC3339)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
