package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func partsPlan() Plan {
	return Plan{Seed: 1, Scenarios: []Scenario{{Name: "s", Stages: []Stage{{Name: "c1", Target: 1, Duration: time.Second}}}},
		Thresholds: []ThresholdSpec{{Expr: "ttft", Conditions: []string{"p(99) < 1s"}}}}
}

// Diff names each part that differs, and the plan's shape only when
// nothing that would explain it does.
func TestDiffNamesWhatDiffers(t *testing.T) {
	base := partsPlan().Parts([]byte("src"), map[string]string{"rate": "5", "key": "s3cret"}, map[string]string{"p.jsonl": "d1"})
	otherScript := partsPlan().Parts([]byte("other"), nil, nil).Script
	tests := []struct {
		name string
		edit func(p *Plan, src *string, params, data map[string]string)
		want string
	}{
		{"same", func(*Plan, *string, map[string]string, map[string]string) {}, ""},
		{"seed", func(p *Plan, _ *string, _, _ map[string]string) { p.Seed = 2 }, "the seed (1 and 2)"},
		{"script", func(_ *Plan, src *string, _, _ map[string]string) { *src = "other" },
			"the script (sha256 " + base.Script[:12] + "… and " + otherScript[:12] + "…)"},
		{"--set value", func(_ *Plan, _ *string, params, _ map[string]string) { params["rate"] = "6" }, "--set rate"},
		{"--set key missing", func(_ *Plan, _ *string, params, _ map[string]string) { delete(params, "key") }, "--set key (set for only one)"},
		{"data file", func(_ *Plan, _ *string, _, data map[string]string) { data["p.jsonl"] = "d2" }, "data file p.jsonl"},
		{"two parts", func(p *Plan, _ *string, params, _ map[string]string) { p.Seed, params["rate"] = 3, "7" },
			"the seed (1 and 3) and --set rate"},
		{"thresholds", func(p *Plan, _ *string, _, _ map[string]string) { p.Thresholds[0].Conditions = []string{"p(99) < 2s"} },
			"the plan's shape (thresholds)"},
		{"scenarios", func(p *Plan, _ *string, _, _ map[string]string) { p.Scenarios[0].Stages[0].Target = 2 },
			"the plan's shape (scenarios)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, src := partsPlan(), "src"
			params, data := map[string]string{"rate": "5", "key": "s3cret"}, map[string]string{"p.jsonl": "d1"}
			tt.edit(&p, &src, params, data)
			other := p.Parts([]byte(src), params, data)
			got := Diff(base, other)
			if tt.want == "" {
				if got != "" || other.Fingerprint() != base.Fingerprint() {
					t.Errorf("Diff = %q, fingerprints %s and %s; want the same plan", got, base.Fingerprint(), other.Fingerprint())
				}
				return
			}
			if got != tt.want {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
			if other.Fingerprint() == base.Fingerprint() {
				t.Error("the fingerprint did not change")
			}
		})
	}
}

// The parts hold digests of --set values, never the values; the target,
// the segment and the barrier are not part of the plan.
func TestPartsKeepNoValues(t *testing.T) {
	p := partsPlan()
	parts := p.Parts([]byte("src"), map[string]string{"key": "s3cret"}, nil)
	if d := parts.Params["key"]; d == "" || strings.Contains(d, "s3cret") {
		t.Errorf("params digest %q", d)
	}
	q := partsPlan()
	q.Target, q.Segment, q.StartAt = Target{BaseURL: "http://elsewhere/v1"}, Segment{Index: 1, Count: 2}, time.Now()
	if got, want := q.Parts([]byte("src"), map[string]string{"key": "s3cret"}, nil).Fingerprint(), parts.Fingerprint(); got != want {
		t.Errorf("fingerprint with another target and segment %s, want %s", got, want)
	}
	if got, want := p.Fingerprint([]byte("src")), p.Parts([]byte("src"), nil, nil).Fingerprint(); got != want {
		t.Errorf("Fingerprint = %s, want the parts' %s", got, want)
	}
}

func TestDigestFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	abs := filepath.Join(t.TempDir(), "abs.txt")
	for path, text := range map[string]string{filepath.Join(dir, "data", "a.jsonl"): "a", filepath.Join(dir, "b.txt"): "a", abs: "c"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := DigestFiles(dir, []string{"data/a.jsonl", "b.txt", abs})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["data/a.jsonl"] != got["b.txt"] || got["b.txt"] == got[abs] || len(got[abs]) != 16 {
		t.Errorf("DigestFiles = %v", got)
	}
	if _, err := DigestFiles(dir, []string{"gone.jsonl"}); err == nil || !strings.Contains(err.Error(), "data file gone.jsonl") {
		t.Errorf("missing file: %v", err)
	}
	if got, err := DigestFiles(dir, nil); got != nil || err != nil {
		t.Errorf("no files: %v, %v", got, err)
	}
}
