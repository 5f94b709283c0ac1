package main

import (
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/analysis"
)

// TestE2EServerSpans runs chat_mix.lua against the simulator in its own
// process, exporting vLLM's request spans (both OTLP protocols) to the
// run's receiver, with 4 batch slots so that 8 and 16 VUs queue. Every
// request meets its span by trace id, carries the server's id as the
// truth log names it, and its parts add up to its TTFT with a residual
// of loopback's size; the cliff names the queue as what grew.
func TestE2EServerSpans(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary twice")
	}
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			serverSpans(t, protocol)
		})
	}
}

func serverSpans(t *testing.T, protocol string) {
	dir := t.TempDir()
	truthLog, out, jsonl := filepath.Join(dir, "truth.jsonl"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	listen := freeAddr(t)
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--max-batch", "4", "--truth-log", truthLog,
		"--otlp-traces-endpoint", "http://"+listen, "--otlp-traces-protocol", protocol)
	url := mock.mockURL(t)
	stdout, stderr, code := runBinaryWithin(t, 4*time.Minute, nil, "run", "../../scenarios/chat_mix.lua",
		"--target", url, "--set", "duration=4s", "--set", "max_tokens=24",
		"--otlp-traces-listen", listen, "--otlp-traces-wait", "8s", "--out", out, "--requests-jsonl", jsonl)
	if code != 0 {
		t.Fatalf("run exited %d:\n%s\n%s", code, stdout, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	res := loadResult(t, out)

	// Every span met its request; every traced request met its span.
	sp := res.ServerSpans
	if sp == nil || sp.Listen != listen {
		t.Fatalf("server_spans %+v, want the receiver at %s", sp, listen)
	}
	if sp.NoSpan != 0 || sp.Unjoined != 0 || sp.ByRequestID != 0 || sp.Malformed != 0 || sp.Joined != sp.Requests || sp.Requests == 0 {
		t.Errorf("server_spans %+v: want every traced request joined by trace id, nothing else", sp)
	}
	if !strings.Contains(stdout, "where the time goes, p50") || !strings.Contains(stdout, "server spans (received at "+listen+")") {
		t.Errorf("summary lacks the breakdown or the spans' account:\n%s", stdout)
	}

	// Request by request: the trace id sent, the server's own id as its
	// log names it, and parts that add up to the client's TTFT.
	ids := map[string]bool{}
	for _, r := range readTruth(t, truthLog) {
		ids[r.ID] = true
	}
	var residuals []float64
	for _, r := range requestRecords(t, jsonl) {
		if r["warmup"] == true || r["error_class"] != nil {
			continue
		}
		id, _ := r["request_id"].(string)
		trace, _ := r["trace_id"].(string)
		if !ids[id] || len(trace) != 32 || r["parts_source"] != "span" {
			t.Errorf("request %v: request_id %q (in the truth log: %v), trace_id %q, parts %v", r["start_offset_ms"], id, ids[id], trace, r["parts_source"])
			continue
		}
		ttft, _ := num(r, "ttft_ms")
		upload, _ := num(r, "upload_ms")
		res, _ := num(r, "residual_ms")
		queue, _ := num(r, "queue_ms")
		prefill, _ := num(r, "prefill_ms")
		if d := ttft - (upload + res + queue + prefill); d > 0.003 || d < -0.003 {
			t.Errorf("request %s: upload %v + residual %v + queue %v + prefill %v ≠ TTFT %v", id, upload, res, queue, prefill, ttft)
		}
		residuals = append(residuals, res)
	}
	if len(residuals) < 50 {
		t.Fatalf("%d requests split, want the run's", len(residuals))
	}
	// The residual is what loopback, the server's front and the first
	// token's way back cost: a millisecond or so, never the queue's
	// hundreds. Bounded generously for a shared machine.
	slices.Sort(residuals)
	med, worst := residuals[len(residuals)/2], residuals[len(residuals)-1]
	t.Logf("%d requests: residual median %.3f ms, min %.3f, max %.3f", len(residuals), med, residuals[0], worst)
	if med < -0.5 || med > 5 || residuals[0] < -1 || worst > 100 {
		t.Errorf("residual median %.3f ms, min %.3f, max %.3f: want about a millisecond", med, residuals[0], worst)
	}

	// The stages beyond the 4 slots queue, and the cliff says so.
	var queueP50 []float64
	for _, st := range res.Stages {
		if st.Breakdown == nil || st.Breakdown.FromSpans != st.Breakdown.Requests || st.Breakdown.Requests != st.OK {
			t.Errorf("stage %s: breakdown %+v over %d ok requests, want every one from spans", st.Stage, st.Breakdown, st.OK)
			continue
		}
		queueP50 = append(queueP50, st.Breakdown.Queue.P50)
	}
	t.Logf("queue p50 per stage (ms): %v; cliff: %s", queueP50, res.Analysis.Sweeps[0].Cliff.Text)
	if len(queueP50) != 4 || queueP50[3] < 10*max(queueP50[0], 1) {
		t.Errorf("queue p50 per stage %v: want the 16-VU stage's far above the 1-VU one's", queueP50)
	}
	var cliff analysis.Finding
	for _, s := range res.Analysis.Sweeps {
		cliff = s.Cliff
	}
	if !cliff.Found || cliff.Explained == nil || cliff.Explained.Grew != "queue" || !strings.Contains(cliff.Text, "where the time went: queue ") {
		t.Errorf("cliff %+v, want it explained by the queue", cliff)
	}
}
