package report

import (
	"encoding/csv"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// stageFields are the per-stage columns before the distributions.
var stageFields = []struct {
	name  string
	value func(*metrics.StageSummary) string
}{
	{"scenario", func(s *metrics.StageSummary) string { return s.Scenario }},
	{"stage", func(s *metrics.StageSummary) string { return s.Stage }},
	{"vus", func(s *metrics.StageSummary) string { return strconv.Itoa(s.VUs) }},
	{"target_rate", func(s *metrics.StageSummary) string { return csvFloat(s.TargetRate) }},
	{"window", func(s *metrics.StageSummary) string { return csvFloat(s.DurationS) }},
	{"requests", func(s *metrics.StageSummary) string { return csvInt(s.Requests) }},
	{"ok", func(s *metrics.StageSummary) string { return csvInt(s.OK) }},
	{"failed", func(s *metrics.StageSummary) string { return csvInt(s.Failed) }},
	{"req_per_sec", func(s *metrics.StageSummary) string { return csvFloat(s.ReqPerSec) }},
	{"output_tok_per_sec", func(s *metrics.StageSummary) string { return csvFloat(s.OutputTokPerSec) }},
	{"input_tok_per_sec", func(s *metrics.StageSummary) string { return csvFloat(s.InputTokPerSec) }},
	{"goodput", func(s *metrics.StageSummary) string { return csvFloat(s.Goodput) }},
	{"good_share", func(s *metrics.StageSummary) string { return csvFloat(s.GoodShare) }},
	{"dirty_requests", func(s *metrics.StageSummary) string { return csvInt(s.DirtyRequests) }},
}

// stageDists are the distributions of each row, in column order.
var stageDists = []struct {
	name string
	dist func(*metrics.StageSummary) metrics.Dist
}{
	{"ttft", func(s *metrics.StageSummary) metrics.Dist { return s.TTFT }},
	{"ttfc", func(s *metrics.StageSummary) metrics.Dist { return s.TTFC }},
	{"tpot", func(s *metrics.StageSummary) metrics.Dist { return s.TPOT }},
	{"itl", func(s *metrics.StageSummary) metrics.Dist { return s.ITL }},
	{"e2e", func(s *metrics.StageSummary) metrics.Dist { return s.E2E }},
	{"ttfb", func(s *metrics.StageSummary) metrics.Dist { return s.TTFB }},
	{"schedule_lag", func(s *metrics.StageSummary) metrics.Dist { return s.ScheduleLag }},
}

// distStats are the statistics of each distribution, in column order.
var distStats = []struct {
	name  string
	value func(metrics.Dist) float64
}{
	{"count", func(d metrics.Dist) float64 { return float64(d.Count) }},
	{"mean", func(d metrics.Dist) float64 { return d.Mean }},
	{"min", func(d metrics.Dist) float64 { return d.Min }},
	{"p50", func(d metrics.Dist) float64 { return d.P50 }},
	{"p90", func(d metrics.Dist) float64 { return d.P90 }},
	{"p95", func(d metrics.Dist) float64 { return d.P95 }},
	{"p99", func(d metrics.Dist) float64 { return d.P99 }},
	{"p99.9", func(d metrics.Dist) float64 { return d.P999 }},
	{"max", func(d metrics.Dist) float64 { return d.Max }},
	{"p99_ci_lo", func(d metrics.Dist) float64 { return d.CI.P99[0] }},
	{"p99_ci_hi", func(d metrics.Dist) float64 { return d.CI.P99[1] }},
}

// stageTrailer are the per-stage columns added after the distributions:
// appended, so that readers by position of older files keep working.
var stageTrailer = []struct {
	name  string
	value func(*metrics.StageSummary) string
}{
	{"planned_s", func(s *metrics.StageSummary) string {
		if s.PlannedS <= 0 {
			return "" // no planned window: iterations executors, older files
		}
		return csvFloat(s.PlannedS)
	}},
	{"tail_requests", func(s *metrics.StageSummary) string { return csvInt(s.TailRequests) }},
}

// targetColumn is the last column: empty on a stage's own row, and on
// the rows that follow it in a run with several targets, the target whose
// share of the stage the row is (metrics.StageSummary.ForTarget).
const targetColumn = "target"

// stageColumns is the header of StagesCSV, built once.
var stageColumns = func() []string {
	var cols []string
	for _, f := range stageFields {
		cols = append(cols, f.name)
	}
	for _, d := range stageDists {
		for _, s := range distStats {
			cols = append(cols, d.name+"_"+s.name)
		}
	}
	for _, f := range stageTrailer {
		cols = append(cols, f.name)
	}
	return append(cols, targetColumn)
}()

// StageColumns returns the header of StagesCSV in order. The list is
// stable: later versions only append columns, so that scripts reading
// columns by position keep working. Latencies are in milliseconds,
// window in seconds. The slice is a copy.
func StageColumns() []string { return slices.Clone(stageColumns) }

// StagesCSV renders r as CSV with one row per stage and every statistic
// (StageColumns), for spreadsheets and plotting scripts; in a run with
// several targets each stage's row is followed by one row per target
// (named in the last column). A distribution
// with no samples has empty cells, not zeros, so that "not measured"
// cannot be read as "instant".
func StagesCSV(r *result.Result) Reporter {
	return func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(stageColumns); err != nil {
			return err
		}
		for i := range r.Stages {
			s := &r.Stages[i]
			if err := cw.Write(append(stageRecord(s), "")); err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(s.ByTarget)) {
				v, _ := s.ForTarget(name)
				if err := cw.Write(append(stageRecord(&v), name)); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	}
}

func stageRecord(s *metrics.StageSummary) []string {
	rec := make([]string, 0, len(stageColumns))
	for _, f := range stageFields {
		rec = append(rec, f.value(s))
	}
	for _, dd := range stageDists {
		d := dd.dist(s)
		for _, st := range distStats {
			switch {
			case st.name == "count":
				rec = append(rec, csvInt(d.Count))
			case d.Count == 0:
				rec = append(rec, "")
			default:
				rec = append(rec, csvFloat(st.value(d)))
			}
		}
	}
	for _, f := range stageTrailer {
		rec = append(rec, f.value(s))
	}
	return rec
}

func csvInt(n int64) string { return strconv.FormatInt(n, 10) }

// csvFloat prints the shortest decimal that reads back as the same value.
func csvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
