package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestE2EMediaScenarios runs the vision and speech scenarios of the
// library on the built-in simulator: every request succeeds, each stage
// measured what its API has (TTFT for the streamed vision chat, E2E for
// every speech request), and the per-request records name the APIs the
// scenario mixes.
func TestE2EMediaScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	tests := map[string]struct {
		apis  []string // the requests' api column
		check func(t *testing.T, s apiStage)
	}{
		"vision.lua": {[]string{"chat"}, func(t *testing.T, s apiStage) {
			if s.TTFT.Count != s.OK || s.OutputTokens == 0 {
				t.Errorf("stage %+v: want every request a streamed chat with output", s)
			}
		}},
		"speech.lua": {[]string{"transcriptions", "speech"}, func(t *testing.T, s apiStage) {
			if s.E2E.Count != s.OK || s.ByAPI["transcriptions"].Requests == 0 {
				t.Errorf("stage %+v: want transcriptions, and E2E for every request", s)
			}
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, jsonl := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.jsonl")
			stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/"+name, "--set", "duration=1s",
				"--out", out, "--requests-jsonl", jsonl, "--seed", "5")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			var res struct {
				Stages []apiStage `json:"stages"`
			}
			data, err := os.ReadFile(out)
			if err != nil || json.Unmarshal(data, &res) != nil || len(res.Stages) == 0 {
				t.Fatalf("result.json: %v\n%s", err, data)
			}
			for _, s := range res.Stages {
				if s.OK == 0 || s.Failed != 0 {
					t.Errorf("stage %s: %d ok, %d failed", s.Stage, s.OK, s.Failed)
				}
				tt.check(t, s)
			}
			apis := requestAPIs(t, jsonl)
			for _, api := range tt.apis {
				if apis[api] == 0 {
					t.Errorf("requests.jsonl api column: %v, want %s among them", apis, api)
				}
			}
			if len(apis) != len(tt.apis) {
				t.Errorf("requests.jsonl api column: %v, want only %v", apis, tt.apis)
			}
		})
	}
}
