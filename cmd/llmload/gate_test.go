package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleResult is a real result file (a 4-stage sweep on the simulator).
const sampleResult = "../../engine/report/testdata/r4.json"

// worsened writes a copy of the sample with every TTFT p99 and its
// interval multiplied by factor, and enough samples to be trusted.
func worsened(t *testing.T, factor float64) string {
	t.Helper()
	data, err := os.ReadFile(sampleResult)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, st := range doc["stages"].([]any) {
		ttft := st.(map[string]any)["ttft"].(map[string]any)
		ttft["p99"] = ttft["p99"].(float64) * factor
		ttft["count"] = 5000.0
		ttft["ci"] = map[string]any{"p99": []any{ttft["p99"].(float64) * 0.99, ttft["p99"].(float64) * 1.01}}
		ttft["unreliable"] = []any{}
		ttft["low_samples"] = false
	}
	out, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "new.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareGate(t *testing.T) {
	base := worsened(t, 1)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"same", []string{"compare", base, base}, exitOK, "ttft.p99"},
		{"regressed", []string{"compare", base, worsened(t, 2)}, exitThreshold, "REGRESSION"},
		{"within bound", []string{"compare", "--max-regression", "150%", base, worsened(t, 2)}, exitOK, "ttft.p99"},
		{"markdown", []string{"compare", "--format", "md", base, worsened(t, 2)}, exitThreshold, "|"},
		{"json", []string{"compare", "--format", "json", base, base}, exitOK, `"rows"`},
		{"bad format", []string{"compare", "--format", "xml", base, base}, exitUsage, "--format"},
		{"bad bound", []string{"compare", "--max-regression", "lots", base, base}, exitUsage, "--max-regression"},
		{"unknown metric", []string{"compare", "--metrics", "ttft.p42", base, base}, exitUsage, "ttft.p42"},
		{"bare number bound", []string{"compare", "--max-regression", "20", base, base}, exitUsage, "20%"},
		{"fraction bound", []string{"compare", "--max-regression", "0.2", base, worsened(t, 2)}, exitThreshold, "beyond 20%"},
		{"one file", []string{"compare", base}, exitUsage, "expected BASE.json and NEW.json, got 1 argument"},
		{"plural summary", []string{"compare", base, worsened(t, 2)}, exitThreshold, "4 regressions beyond 20%, 8 inconclusive (20 comparisons in 4 stages)"},
		{"gate message", []string{"compare", base, worsened(t, 2)}, exitThreshold, "4 significant regressions beyond 20% against"},
		// The sample file predates histograms: its short stages' p99s are
		// too noisy to decide, which must never read as a pass.
		{"inconclusive pass", []string{"compare", base, base}, exitOK, "⚠ inconclusive"},
		{"inconclusive fail", []string{"compare", "--inconclusive", "fail", base, base}, exitThreshold, "inconclusive (--inconclusive fail)"},
		{"bad inconclusive", []string{"compare", "--inconclusive", "maybe", base, base}, exitUsage, `--inconclusive "maybe": want pass or fail`},
		{"missing file", []string{"compare", base, "/nonexistent.json"}, exitError, "nonexistent.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runInProcess(t, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q?\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
}

func TestCompareAndReportBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data, _ := os.ReadFile(sampleResult)
	truncated := write("truncated.json", string(data[:len(data)/2]))
	future := write("future.json", `{"schema_version": 99, "stages": []}`)
	other := write("other.json", strings.ReplaceAll(string(data), `"stage": "c`, `"stage": "x`))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"compare", sampleResult, truncated}, "truncated.json"},
		{[]string{"compare", sampleResult, future}, "future.json"},
		{[]string{"compare", sampleResult, other}, "no stage"},
		{[]string{"report", truncated}, "truncated.json"},
		{[]string{"report", future}, "schema"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runInProcess(t, tt.args...)
		if code != exitError || !strings.Contains(strings.ToLower(stderr), strings.ToLower(tt.want)) {
			t.Errorf("%v: exit %d, stderr %q (want 1 naming %q)\n%s", tt.args, code, stderr, tt.want, stdout)
		}
	}
}

func TestReportRendersHTMLAndStagesCSV(t *testing.T) {
	dir := t.TempDir()
	html, csv := filepath.Join(dir, "r.html"), filepath.Join(dir, "s.csv")
	stdout, stderr, code := runInProcess(t, "report", sampleResult, "--html", html, "--csv-stages", csv)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "throughput knee at 8 VUs") {
		t.Errorf("summary does not name the knee:\n%s", stdout)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), `data-chart="sweep-0`) || strings.Contains(string(page), "http://cdn") {
		t.Errorf("HTML lacks the sweep chart or loads from outside (%d bytes)", len(page))
	}
	rows, _ := os.ReadFile(csv)
	if got := strings.Count(string(rows), "\n"); got != 5 {
		t.Errorf("stages CSV has %d lines, want a header and 4 stages", got)
	}
}

func TestRunWithBaselineAndHTML(t *testing.T) {
	dir := t.TempDir()
	base, html := filepath.Join(dir, "base.json"), filepath.Join(dir, "r.html")
	if _, stderr, code := runInProcess(t, "run", "--quiet", "--seed", "5", "--out", base, writeScript(t, okScript)); code != exitOK {
		t.Fatalf("baseline run: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runInProcess(t, "run", "--quiet", "--seed", "5", "--baseline", base, "--max-regression", "1000%", "--html", html, writeScript(t, okScript))
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "ttft.p99") {
		t.Errorf("no comparison after the run:\n%s", stdout)
	}
	if page, err := os.ReadFile(html); err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("--html: %v", err)
	}
	_, stderr, code = runInProcess(t, "run", "--baseline", "/nonexistent.json", writeScript(t, okScript))
	if code != exitError || !strings.Contains(stderr, "nonexistent.json") {
		t.Errorf("missing baseline: exit %d, %s", code, stderr)
	}
}
