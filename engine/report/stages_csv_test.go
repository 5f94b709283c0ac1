package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

func TestStagesCSVGolden(t *testing.T) {
	golden(t, "stages.csv.golden", render(t, StagesCSV(richResult())))
}

func TestStagesCSVReadBack(t *testing.T) {
	r := richResult()
	recs, err := csv.NewReader(bytes.NewReader(render(t, StagesCSV(r)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), len(r.Stages)+1; got != want {
		t.Fatalf("%d records, want %d", got, want)
	}
	if got, want := recs[0], StageColumns(); !slices.Equal(got, want) {
		t.Errorf("header = %v, want %v", got, want)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	tests := []struct {
		row  int
		col  string
		want string
	}{
		{1, "scenario", "chat"},
		{1, "stage", "c1"},
		{1, "failed", "2"},
		{1, "goodput", "0.85"},
		{1, "dirty_requests", "10"},
		{2, "ttft_count", "0"},
		{2, "ttft_p50", ""}, // nothing measured: empty, not 0
		{3, "target_rate", "4"},
		{3, "schedule_lag_p50", "0.3"},
		{4, "vus", "1"},
		{4, "window", "60"},
	}
	for _, tt := range tests {
		i := col(tt.col)
		if i < 0 {
			t.Errorf("no column %q", tt.col)
			continue
		}
		if got := recs[tt.row][i]; got != tt.want {
			t.Errorf("row %d %s = %q, want %q", tt.row, tt.col, got, tt.want)
		}
	}
}

// TestStageColumnsStable pins the first columns: the list may only grow.
func TestStageColumnsStable(t *testing.T) {
	cols := StageColumns()
	head := []string{"scenario", "stage", "vus", "target_rate", "window", "requests", "ok", "failed",
		"req_per_sec", "output_tok_per_sec", "input_tok_per_sec", "goodput", "good_share", "dirty_requests",
		"ttft_count", "ttft_mean", "ttft_min", "ttft_p50", "ttft_p90", "ttft_p95", "ttft_p99", "ttft_p99.9",
		"ttft_max", "ttft_p99_ci_lo", "ttft_p99_ci_hi", "ttfc_count"}
	if got := cols[:len(head)]; !slices.Equal(got, head) {
		t.Errorf("columns start %v, want %v", got, head)
	}
	if got, want := len(cols), 14+7*11+3+16+10; got != want {
		t.Errorf("%d columns, want %d", got, want)
	}
	// Columns added later come last, so readers by position keep working.
	if got, want := cols[14+7*11:14+7*11+3], []string{"planned_s", "tail_requests", "target"}; !slices.Equal(got, want) {
		t.Errorf("columns after the distributions %v, want %v", got, want)
	}
	media := []string{"media_requests", "images_per_sec", "audio_in_s_per_sec", "body_mb_per_sec", "tokens_per_image",
		"encode_p50", "encode_p99", "upload_p50", "upload_p99", "audio_out_s_per_sec", "rtf_p50", "rtf_p90", "rtf_p99",
		"audio_bytes_per_s_p50", "first_audio_p50", "first_audio_p99"}
	if got := cols[14+7*11+3 : 14+7*11+3+16]; !slices.Equal(got, media) {
		t.Errorf("columns after target %v, want %v", got, media)
	}
	tasks := []string{"tasks", "tasks_per_sec", "task_ok", "task_failed", "task_good", "task_goodput",
		"task_p50", "task_p99", "task_calls_p50", "task_tool_p50"}
	if got := cols[14+7*11+3+16:]; !slices.Equal(got, tasks) {
		t.Errorf("columns after media %v, want %v", got, tasks)
	}
	cols[0] = "changed"
	if StageColumns()[0] != "scenario" {
		t.Error("StageColumns returned its own slice")
	}
}

// TestStagesCSVUpload: the upload cells are the stage's upload, media or
// a large text body, so a stage without media that measured uploads has
// them; a stage that measured none leaves them empty, and the media-only
// cells stay empty without media.
func TestStagesCSVUpload(t *testing.T) {
	tests := []struct {
		name     string
		stage    metrics.StageSummary
		p50, p99 string
		encode   string
	}{
		{"large text bodies", metrics.StageSummary{Scenario: "s", Stage: "a", Upload: metrics.Dist{Count: 3, P50: 700, P99: 760}}, "700", "760", ""},
		{"no upload measured", metrics.StageSummary{Scenario: "s", Stage: "b"}, "", "", ""},
		{"media", metrics.StageSummary{Scenario: "s", Stage: "c", Upload: metrics.Dist{Count: 2, P50: 12, P99: 15},
			Media: &metrics.MediaSummary{Requests: 2, Encode: metrics.Dist{Count: 2, P50: 0.5, P99: 0.6}, Upload: metrics.Dist{Count: 2, P50: 12, P99: 15}}},
			"12", "15", "0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &result.Result{Stages: []metrics.StageSummary{tt.stage}}
			recs, err := csv.NewReader(bytes.NewReader(render(t, StagesCSV(r)))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			cell := func(name string) string { return recs[1][slices.Index(recs[0], name)] }
			if got := [3]string{cell("upload_p50"), cell("upload_p99"), cell("encode_p50")}; got != [3]string{tt.p50, tt.p99, tt.encode} {
				t.Errorf("upload_p50, upload_p99, encode_p50 = %q, want %q", got, [3]string{tt.p50, tt.p99, tt.encode})
			}
		})
	}
}
