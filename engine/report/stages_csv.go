package report

import (
	"encoding/csv"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/llmload/llmload/engine"
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

// targetColumn follows the trailer: empty on a stage's own row, and on
// the rows that follow it in a run with several targets, the target whose
// share of the stage the row is (metrics.StageSummary.ForTarget).
const targetColumn = "target"

// mediaColumns come after targetColumn, added with the media figures
// (metrics.MediaSummary): empty on the rows of a stage without media
// requests, and on a target's rows, whose share of them is not kept.
// Rates per second of the window, times in ms, MB of 10^6 bytes; the
// first audio is the speech requests' TTFT.
var mediaColumns = []struct {
	name  string
	value func(s *metrics.StageSummary, m *metrics.MediaSummary) string
}{
	{"media_requests", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvInt(m.Requests) }},
	{"images_per_sec", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvFloat(m.ImagesPerSec) }},
	{"audio_in_s_per_sec", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvFloat(m.AudioInSPerSec) }},
	{"body_mb_per_sec", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvFloat(m.BodyMBPerSec) }},
	{"tokens_per_image", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string {
		return csvIf(m.ImagesCounted > 0, m.TokensPerImage)
	}},
	{"encode_p50", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvDist(m.Encode, m.Encode.P50) }},
	{"encode_p99", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvDist(m.Encode, m.Encode.P99) }},
	// The upload of every request that measured one, media or a large
	// body (StageSummary.Upload): a long text prompt on a slow link is an
	// upload too.
	{"upload_p50", func(s *metrics.StageSummary, _ *metrics.MediaSummary) string { return csvDist(s.Upload, s.Upload.P50) }},
	{"upload_p99", func(s *metrics.StageSummary, _ *metrics.MediaSummary) string { return csvDist(s.Upload, s.Upload.P99) }},
	{"audio_out_s_per_sec", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string {
		return csvIf(m.AudioOutS > 0, m.AudioOutSPerSec)
	}},
	{"rtf_p50", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvDist(m.RTF, m.RTF.P50) }},
	{"rtf_p90", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvDist(m.RTF, m.RTF.P90) }},
	{"rtf_p99", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string { return csvDist(m.RTF, m.RTF.P99) }},
	{"audio_bytes_per_s_p50", func(_ *metrics.StageSummary, m *metrics.MediaSummary) string {
		return csvDist(m.AudioBytesPerSec, m.AudioBytesPerSec.P50)
	}},
	{"first_audio_p50", func(s *metrics.StageSummary, _ *metrics.MediaSummary) string {
		d := s.ByAPI[engine.EndpointSpeech].TTFT
		return csvDist(d, d.P50)
	}},
	{"first_audio_p99", func(s *metrics.StageSummary, _ *metrics.MediaSummary) string {
		d := s.ByAPI[engine.EndpointSpeech].TTFT
		return csvDist(d, d.P99)
	}},
}

// taskColumns come after mediaColumns, added with the task figures
// (metrics.TaskSummary): empty on the rows of a stage without tasks, and
// on a target's rows, since a task may span targets. Times in ms; rates
// per second of the window.
var taskColumns = []struct {
	name  string
	value func(t *metrics.TaskSummary) string
}{
	{"tasks", func(t *metrics.TaskSummary) string { return csvInt(t.Tasks) }},
	{"tasks_per_sec", func(t *metrics.TaskSummary) string { return csvFloat(t.TasksPerSec) }},
	{"task_ok", func(t *metrics.TaskSummary) string { return csvInt(t.OK) }},
	{"task_failed", func(t *metrics.TaskSummary) string { return csvInt(t.Failed) }},
	{"task_good", func(t *metrics.TaskSummary) string { return csvInt(t.Good) }},
	{"task_goodput", func(t *metrics.TaskSummary) string { return csvFloat(t.Goodput) }},
	{"task_p50", func(t *metrics.TaskSummary) string { return csvDist(t.Duration, t.Duration.P50) }},
	{"task_p99", func(t *metrics.TaskSummary) string { return csvDist(t.Duration, t.Duration.P99) }},
	{"task_calls_p50", func(t *metrics.TaskSummary) string { return csvDist(t.Calls, t.Calls.P50) }},
	{"task_tool_p50", func(t *metrics.TaskSummary) string { return csvDist(t.Tool, t.Tool.P50) }},
}

// taskRecord is a row's task cells.
func taskRecord(s *metrics.StageSummary) []string {
	rec := make([]string, len(taskColumns))
	if s.Tasks == nil {
		return rec
	}
	for i, c := range taskColumns {
		rec[i] = c.value(s.Tasks)
	}
	return rec
}

// stageMediaColumns are the media columns that hold the stage's own
// figure, filled on a stage without media too (their value gets a nil
// MediaSummary there).
var stageMediaColumns = map[string]bool{"upload_p50": true, "upload_p99": true}

// mediaRecord is a row's media cells.
func mediaRecord(s *metrics.StageSummary) []string {
	rec := make([]string, len(mediaColumns))
	for i, c := range mediaColumns {
		if s.Media != nil || stageMediaColumns[c.name] {
			rec[i] = c.value(s, s.Media)
		}
	}
	return rec
}

// csvDist is v of d, empty when d has no samples.
func csvDist(d metrics.Dist, v float64) string { return csvIf(d.Count > 0, v) }

// csvIf is v when it was measured, else empty.
func csvIf(measured bool, v float64) string {
	if !measured {
		return ""
	}
	return csvFloat(v)
}

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
	cols = append(cols, targetColumn)
	for _, c := range mediaColumns {
		cols = append(cols, c.name)
	}
	for _, c := range taskColumns {
		cols = append(cols, c.name)
	}
	return cols
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
			if err := cw.Write(slices.Concat(stageRecord(s), []string{""}, mediaRecord(s), taskRecord(s))); err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(s.ByTarget)) {
				v, _ := s.ForTarget(name)
				if err := cw.Write(slices.Concat(stageRecord(&v), []string{name}, mediaRecord(&v), taskRecord(&v))); err != nil {
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
