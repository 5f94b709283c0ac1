package main

import "testing"

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
			if m := s.Media; m == nil || m.Images < s.OK || m.BodyBytes == 0 || m.MediaTokens < 64*m.Images {
				t.Errorf("stage %s media %+v: want an image or two a request, each of 64 tokens or more (81 for the smallest bucket)", s.Stage, m)
			}
			if s.TTFT.Count != s.OK || s.OutputTokens == 0 {
				t.Errorf("stage %+v: want every request a streamed chat with output", s)
			}
		}},
		"speech.lua": {[]string{"transcriptions", "speech"}, func(t *testing.T, s apiStage) {
			if m := s.Media; m == nil || m.AudioInS <= 0 || m.AudioOutS <= 0 {
				t.Errorf("stage %s media %+v: want audio sent and speech received", s.Stage, m)
			}
			if s.E2E.Count != s.OK || s.ByAPI["transcriptions"].Requests == 0 {
				t.Errorf("stage %+v: want transcriptions, and E2E for every request", s)
			}
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stages, apis, _ := runAPIScenario(t, name, "5")
			for _, s := range stages {
				tt.check(t, s)
			}
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
