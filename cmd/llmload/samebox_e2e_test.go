//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
)

// minOtherForBusy is the share of all cores (%) other processes must
// hold in a stage this test accepts as MACHINE-BUSY: go test ./...
// runs other packages beside this one, and their CPU may rightly flag a
// stage; the mock's may not.
const minOtherForBusy = 20

// TestE2ESameBoxServer runs chat_mix against llmload mock started as a
// process of its own on loopback, made CPU-bound (--cpu-per-token) so that
// it takes most of the machine as llama.cpp on a CPU does, while llmload
// uses little. The run must find the mock's process, split each stage's
// machine CPU into llmload, the server and the rest, and never mark a
// stage MACHINE-BUSY, nor a knee or cliff suspect, for the server's CPU.
func TestE2ESameBoxServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 s sweep against a CPU-bound mock")
	}
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp")
	}
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--max-batch", "16", "--decode-base", "2ms", "--cpu-per-token", "3ms")
	url := mock.mockURL(t)
	defer mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)

	out := filepath.Join(t.TempDir(), "result.json")
	stdout, stderr, code := runBinary(t, nil, "run", "../../scenarios/chat_mix.lua", "--target", url,
		"--set", "duration=3s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	pid := mock.cmd.Process.Pid
	found := fmt.Sprintf("llmload pid %d", pid)
	if !strings.Contains(stderr, "local server: "+found+", on this machine") {
		t.Errorf("stderr does not name the mock's process %q:\n%s", found, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), "server ("+found+")") {
		t.Errorf("the summary's self-check does not name the server:\n%s", stdout)
	}
	res := loadResult(t, out)
	if ls := res.Run.LocalServer; ls == nil || len(ls.Processes) != 1 || ls.Processes[0].PID != pid || ls.Processes[0].Name != "llmload" {
		t.Fatalf("run.local_server = %+v, want the mock, llmload pid %d", ls, pid)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "cpu-per-token") {
		t.Error("the result holds the mock's command line")
	}
	checkSameBoxStages(t, res.Stages, string(data))
}

// checkSameBoxStages holds each stage's split: the mock busy, and no
// MACHINE-BUSY (nor a suspect finding) unless other processes held a
// good part of the machine.
func checkSameBoxStages(t *testing.T, stages []metrics.StageSummary, resultJSON string) {
	t.Helper()
	var busiest float64
	flagged := false
	for _, st := range stages {
		c := st.Client
		if c == nil || c.Server == nil {
			t.Fatalf("stage %s has no local server figures: %+v", st.Stage, c)
		}
		s := c.Server
		t.Logf("%s: machine %.0f%%: llmload %.0f%%, server %.0f%%, other %.0f%%; scheduling p99 %.2f ms; machine-busy %v",
			st.Stage, s.MachinePercent, s.OwnPercent, s.ServerPercent, s.OtherPercent, c.SchedLatencyP99MS, c.MachineBusy)
		busiest = max(busiest, s.ServerPercent)
		if c.MachineBusy && s.OtherPercent < minOtherForBusy {
			t.Errorf("stage %s is MACHINE-BUSY with other processes at %.0f%% of the machine and the server at %.0f%%: %q",
				st.Stage, s.OtherPercent, s.ServerPercent, c.MachineReasons)
		}
		flagged = flagged || c.MachineBusy
	}
	if busiest < 25 {
		t.Errorf("the CPU-bound mock used at most %.0f%% of the machine in a stage: it was not busy, the test shows nothing", busiest)
	}
	if !flagged && strings.Contains(resultJSON, "the machine was busy with other processes") {
		t.Error("a knee or cliff is suspect for a busy machine, though no stage was MACHINE-BUSY")
	}
}
