package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// targetsScript spreads a fixed count of requests across three replicas
// by policy; {urls} are the replicas' base URLs.
const targetsScript = `local llm = require("llmload")
options = {
  targets = {
    r1 = { base_url = %q },
    r2 = { base_url = %q, weight = 2 },
    r3 = { base_url = %q },
  },
  balance = %q,
  scenarios = {
    spread = { executor = "shared-iterations", exec = "ask", vus = 3, iterations = 60 },
    pinned = { executor = "shared-iterations", exec = "ask", vus = 1, iterations = 5, target = "r3" },
  },
  thresholds = { ["requests{target:r2}"] = "count > 0" },
}
function ask(vu)
  llm.chat { messages = { { role = "user", content = "[" .. vu.request_id .. "] hi" } }, max_tokens = 4 }
end
`

// TestE2ETargetsSpreadAndReport: a run across three replicas (three
// llmload mock processes) spreads its requests as its policy says —
// exactly for round robin and weighted — sends a scenario pinned to one
// replica only there, and gives every figure per target in the result
// JSON, the stages CSV, the per-request CSV, the HTML and the summary;
// compare --targets gates one replica against another.
func TestE2ETargetsSpreadAndReport(t *testing.T) {
	dir := t.TempDir()
	var urls []string
	for i := range 3 {
		_, url := startMock(t, filepath.Join(dir, fmt.Sprintf("truth-%d.jsonl", i)))
		urls = append(urls, url)
	}
	for _, tc := range []struct {
		policy string
		want   map[string]int64 // spread's requests per replica
	}{
		{"round_robin", map[string]int64{"r1": 20, "r2": 20, "r3": 20}},
		{"weighted", map[string]int64{"r1": 15, "r2": 30, "r3": 15}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			script := filepath.Join(dir, tc.policy+".lua")
			if err := os.WriteFile(script, []byte(fmt.Sprintf(targetsScript, urls[0], urls[1], urls[2], tc.policy)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, html := filepath.Join(dir, tc.policy+".json"), filepath.Join(dir, tc.policy+".html")
			stages, reqs := filepath.Join(dir, tc.policy+"-stages.csv"), filepath.Join(dir, tc.policy+"-requests.csv")
			stdout, stderr, code := runBinary(t, cleanEnv(), "run", script, "--seed", "3", "--out", out, "--html", html,
				"--csv-stages", stages, "--csv", reqs)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			res := loadResult(t, out)
			if len(res.Run.Targets) != 3 {
				t.Fatalf("result names %d targets, want 3: %+v", len(res.Run.Targets), res.Run.Targets)
			}
			got := map[string]map[string]int64{}
			for _, st := range res.Stages {
				got[st.Scenario] = map[string]int64{}
				for name, ts := range st.ByTarget {
					got[st.Scenario][name] = ts.Requests
					if ts.Requests > 0 && (ts.TTFT.Count == 0 || ts.OutputTokens == 0) {
						t.Errorf("%s/%s target %s: no TTFT or output tokens: %+v", st.Scenario, st.Stage, name, ts)
					}
				}
			}
			for name, n := range tc.want {
				if got["spread"][name] != n {
					t.Errorf("spread: target %s served %d requests, want exactly %d (all: %v)", name, got["spread"][name], n, got["spread"])
				}
			}
			if p := got["pinned"]; len(p) != 1 || p["r3"] != 5 {
				t.Errorf("pinned to r3: served by %v, want r3 only, 5 requests", p)
			}
			checkTargetCSVs(t, stages, reqs)
			page, _ := os.ReadFile(html)
			summary := stdout + stderr
			for _, want := range []string{"by target", "r1", "r2", "r3"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("HTML lacks %q", want)
				}
				if !strings.Contains(summary, want) {
					t.Errorf("summary lacks %q", want)
				}
			}
			cmpOut, cmpErr, code := runBinary(t, cleanEnv(), "compare", "--targets", "r1,r3", out)
			if code != 0 && code != 99 || !strings.Contains(cmpOut, "target r1") || !strings.Contains(cmpOut, "ttft.p99") {
				t.Errorf("compare --targets r1,r3: exit %d\n%s\n%s", code, cmpOut, cmpErr)
			}
		})
	}
}

// checkTargetCSVs: the stages CSV has a row per target after each stage's,
// and every per-request row names its target.
func checkTargetCSVs(t *testing.T, stages, reqs string) {
	t.Helper()
	rows := readCSV(t, stages)
	last := slices.Index(rows[0], "target") // the media columns come after it
	if last < 0 {
		t.Fatalf("stages CSV has no target column: %v", rows[0])
	}
	targets := 0
	for _, r := range rows[1:] {
		if r[last] != "" {
			targets++
		}
	}
	if targets != 4 { // spread's three and pinned's one
		t.Errorf("stages CSV has %d target rows, want 4", targets)
	}
	rows = readCSV(t, reqs)
	col := -1
	for i, name := range rows[0] {
		if name == "target" {
			col = i
		}
	}
	if col < 0 {
		t.Fatal("requests CSV has no target column")
	}
	for i, r := range rows[1:] {
		if !strings.HasPrefix(r[col], "r") {
			t.Fatalf("request row %d names target %q", i+1, r[col])
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	return rows
}

// TestE2ETargetsUnreachableNamed: a target that does not answer fails the
// preflight, named, before any load; --target cannot choose among several.
func TestE2ETargetsUnreachableNamed(t *testing.T) {
	dir := t.TempDir()
	_, url := startMock(t, filepath.Join(dir, "truth.jsonl"))
	script := filepath.Join(dir, "down.lua")
	src := fmt.Sprintf(targetsScript, url, url, "http://127.0.0.1:1/v1", "round_robin")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runBinary(t, cleanEnv(), "run", script, "-q")
	if code != 1 || !strings.Contains(stderr, `target "r3" (options.targets.r3): preflight failed, no load sent`) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 naming target r3's preflight", code, stderr)
	}
	_, stderr, code = runBinary(t, cleanEnv(), "run", script, "--target", url, "-q")
	if code != 2 || !strings.Contains(stderr, "--target: the scenario names several targets (options.targets r1, r2, r3)") {
		t.Errorf("--target with targets: exit %d, stderr:\n%s", code, stderr)
	}
}
