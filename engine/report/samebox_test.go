package report

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// sameBoxResult is the run: a sweep against llama.cpp on loopback
// with nothing else running. The server takes most of the machine's CPU
// and llmload little; the self-check counted the server apart, so no
// stage is machine-busy.
func sameBoxResult() *result.Result {
	meta, _ := fullFixture()
	meta.Target, meta.Complete = "http://127.0.0.1:8080/v1", true
	meta.LocalServer = &result.LocalServer{Processes: []result.ServerProcess{{PID: 1234, Name: "llama-server"}}}
	stages := sweepStages()
	server := []float64{22, 40, 46, 46, 47}
	for i := range stages {
		s := &stages[i]
		s.DurationS = s.PlannedS
		own := 2 + float64(i)
		s.Client = &engine.ClientCheck{CPUPercent: 2 * own, Cores: 2, SchedLatencyP99MS: 0.2, GCPauseP99MS: 0.05,
			MachineMeasured: true, MachineCores: 2, MachineCPUPercent: own + server[i] + 8, OwnSharePercent: 100 * own / (own + server[i] + 2),
			RunQueue: 4.5, Samples: 60,
			Server: &engine.ServerCPU{CPUPercent: 2*server[i] + 10, MachinePercent: own + server[i] + 2, OwnPercent: own, ServerPercent: server[i], OtherPercent: 2}}
	}
	return result.New(meta, &metrics.Summary{Stages: stages, SLOSet: true})
}

func TestSameBoxGolden(t *testing.T) {
	text := string(render(t, Text(sameBoxResult())))
	golden(t, "samebox.txt.golden", []byte(text))
	html := string(render(t, HTML(sameBoxResult())))
	golden(t, "samebox.html.golden", []byte(html))
	for name, out := range map[string]string{"text": text, "HTML": html} {
		if strings.Contains(out, "MACHINE-BUSY") || strings.Contains(out, "suspect") || strings.Contains(out, "busy with other processes") {
			t.Errorf("%s: a busy local server on a quiet machine is flagged:\n%s", name, out)
		}
	}
	// The health lines wrap: read them as one.
	assertText(t, strings.Join(strings.Fields(text), " "), []string{"c16 client: CPU 12% (of 200% for 2 cores)",
		"machine: CPU 55% on average (highest 61%): llmload 6%, server (llama-server pid 1234) 47%, other 2%"}, nil)
	assertText(t, html, []string{"<dt>local server</dt><dd>llama-server pid 1234, on this machine: its CPU is counted apart from other processes&#39;; its mean share of all cores per stage: c1 22%, c2 40%, c4 46%, c8 46%, c16 47%</dd>"}, nil)
}

func TestLocalServerText(t *testing.T) {
	found := sameBoxResult()
	missing := sameBoxResult()
	missing.Run.LocalServer = &result.LocalServer{Note: "not found: no socket listens on 127.0.0.1:8080 in llmload's network namespace"}
	remote := sameBoxResult()
	remote.Run.LocalServer = nil
	merged := sameBoxResult()
	merged.Run.LocalServer = nil
	merged.Run.Segments = []result.Segment{{LocalServer: found.Run.LocalServer}, {LocalServer: &result.LocalServer{
		Processes: []result.ServerProcess{{PID: 10, Name: "vllm"}, {PID: 11, Name: "vllm"}}}}, {}}
	tests := []struct {
		name       string
		r          *result.Result
		line, proc string
	}{
		{"found", found, "llama-server pid 1234, on this machine", "llama-server pid 1234"},
		{"not found", missing, "not found: no socket listens on 127.0.0.1:8080 in llmload's network namespace", ""},
		{"remote", remote, "", ""},
		{"merged segments", merged, "", "llama-server pid 1234; vllm pids 10, 11"},
	}
	for _, tt := range tests {
		if got := localServerText(tt.r, stageLabels(tt.r.Stages)); !strings.HasPrefix(got, tt.line) || (tt.line == "") != (got == "") {
			t.Errorf("%s: line %q, want %q", tt.name, got, tt.line)
		}
		if got := serverName(tt.r); got != tt.proc {
			t.Errorf("%s: name %q, want %q", tt.name, got, tt.proc)
		}
	}
}
