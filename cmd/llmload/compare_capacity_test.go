package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
)

// capacityFile writes a result of one capacity search between lo and hi
// req/s.
func capacityFile(t *testing.T, lo, hi float64) string {
	t.Helper()
	r := result.New(result.Meta{Scenario: "capacity.lua", Complete: true}, nil)
	r.AddCapacity(result.Capacity{Scenario: "search", Load: plan.CapacityRate, Unit: "req/s", Capacity: (lo + hi) / 2, Lo: lo, Hi: hi})
	path := filepath.Join(t.TempDir(), "capacity.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.JSON(r)(f); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareCapacityGate(t *testing.T) {
	base := capacityFile(t, 39.8, 43.2)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"same", []string{"compare", base, capacityFile(t, 40, 43.5)}, exitOK, "capacity: no drop beyond 10% (search)"},
		{"dropped", []string{"compare", base, capacityFile(t, 30, 32)}, exitThreshold, "1 capacity drop beyond 10% (search) against"},
		{"within a wider bound", []string{"compare", "--max-capacity-drop", "40%", base, capacityFile(t, 30, 32)}, exitOK, "no drop beyond 40%"},
		{"too wide to tell", []string{"compare", base, capacityFile(t, 35, 40)}, exitOK, "⚠ capacity inconclusive"},
		{"too wide to tell fails", []string{"compare", "--inconclusive", "fail", base, capacityFile(t, 35, 40)}, exitThreshold,
			"1 comparison inconclusive (--inconclusive fail)"},
		{"bad bound", []string{"compare", "--max-capacity-drop", "10", base, base}, exitUsage, "--max-capacity-drop \"10\": write a percentage (10%)"},
		{"all of it", []string{"compare", "--max-capacity-drop", "100%", base, base}, exitUsage, "can never be seen"},
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
