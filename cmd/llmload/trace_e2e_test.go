package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
)

// TestE2ETraceReplay replays scenarios/trace_replay.lua's trace (200
// records over 4 s) against a simulator that logs what it received, and
// holds every request against its record: arrivals within 5 ms (p99) of
// the intended times, max_tokens equal to output_length, prompts of
// exactly input_length tokens, and prompts that share exactly the blocks
// their hash ids share.
func TestE2ETraceReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against a mock for 5 s")
	}
	dir := t.TempDir()
	truthLog, result := filepath.Join(dir, "truth.jsonl"), filepath.Join(dir, "trace.json")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "20ms", "--fixed-itl", "2ms",
		"--tokenizer", "cl100k_base", "--truth-log", truthLog, "--truth-log-prompts", "--model", "Qwen/Qwen2.5-7B-Instruct")
	url := mock.mockURL(t)
	_, stderr, code := runBinary(t, nil, "run", "../../scenarios/trace_replay.lua", "--target", url,
		"--set", "pre_allocated_vus=96", "--out", result, "-q")
	if code != 0 {
		t.Fatalf("run exited %d:\n%s", code, stderr)
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	server := readTruth(t, truthLog)
	tr, err := dataset.LoadTrace("../../scenarios/data/trace_mooncake.jsonl", dataset.TraceFormat{Kind: dataset.TraceMooncake, BlockTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	// The preflight's request is the one more than the trace's records.
	if len(server) != len(tr.Records)+1 {
		t.Fatalf("the server saw %d requests, the trace has %d records (and the preflight 1)", len(server), len(tr.Records))
	}
	prompter, err := dataset.NewTracePrompter("cl100k_base", 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	matched := matchRecords(t, tr, prompter, server)
	slices.SortFunc(server, func(a, b sim.TruthRecord) int { return a.Arrival.Compare(b.Arrival) })
	server = server[1:] // the preflight came first

	// Arrivals: each request's arrival less its record's offset is the
	// replay's start, the same for all within the client's precision.
	starts := make([]float64, len(matched))
	for i, s := range matched {
		starts[i] = float64(s.Arrival.Sub(matched[0].Arrival)-tr.Records[i].At) / float64(time.Millisecond)
	}
	med := median(starts)
	devs := make([]float64, len(starts))
	for i, s := range starts {
		devs[i] = math.Abs(s - med)
	}
	slices.Sort(devs)
	p99 := devs[int(math.Ceil(0.99*float64(len(devs))))-1]
	t.Logf("arrival vs intended: p50 %.3f ms, p99 %.3f ms, max %.3f ms off", devs[len(devs)/2], p99, devs[len(devs)-1])
	// 5 ms is the bound on a machine that lets llmload run; when its
	// self-check found the machine busy with other work (go test ./...
	// runs other packages beside this one on 2 cores) the run itself says
	// its timings are suspect, and the bound is a generous one instead.
	bound := 5.0
	if raceEnabled {
		bound = 20 // the 5 ms holds for the build users run
	}
	if busy := machineBusy(loadResult(t, result)); busy != "" {
		bound = 25
		t.Logf("the run's self-check: %s; bound %.0f ms", busy, bound)
	}
	if p99 > bound {
		t.Errorf("arrivals p99 %.2f ms from their intended times, want ≤ %.0f ms", p99, bound)
	}
	for i, s := range matched {
		rec := &tr.Records[i]
		if s.MaxTokens != rec.Output || s.MinTokens == nil || *s.MinTokens != rec.Output || s.IgnoreEOS == nil || !*s.IgnoreEOS {
			t.Errorf("record %d (line %d): max_tokens %d, min_tokens %v, ignore_eos %v; want %d, %d, true",
				i, rec.Line, s.MaxTokens, s.MinTokens, s.IgnoreEOS, rec.Output, rec.Output)
		}
		if s.PromptTokens != rec.Input {
			t.Errorf("record %d (line %d): the server counted %d prompt tokens, the trace says %d", i, rec.Line, s.PromptTokens, rec.Input)
		}
	}
	checkSharedBlocks(t, tr, matched)
}

// matchRecords finds each record's request at the server by its prompt;
// records with the same prompt take the requests in order of arrival.
func matchRecords(t *testing.T, tr *dataset.Trace, p *dataset.TracePrompter, server []sim.TruthRecord) []sim.TruthRecord {
	t.Helper()
	byPrompt := map[string][]sim.TruthRecord{}
	for _, s := range server {
		byPrompt[s.Prompt] = append(byPrompt[s.Prompt], s)
	}
	for _, ss := range byPrompt {
		slices.SortFunc(ss, func(a, b sim.TruthRecord) int { return a.Arrival.Compare(b.Arrival) })
	}
	out := make([]sim.TruthRecord, len(tr.Records))
	for i := range tr.Records {
		text, _ := p.Prompt(&tr.Records[i], i)
		ss := byPrompt[text]
		if len(ss) == 0 {
			t.Fatalf("record %d (line %d): no request at the server sent its prompt", i, tr.Records[i].Line)
		}
		out[i], byPrompt[text] = ss[0], ss[1:]
	}
	return out
}

// checkSharedBlocks holds every pair of records against their prompts at
// the server: the leading blocks their hash ids share are identical words,
// and the first block whose ids differ differs.
func checkSharedBlocks(t *testing.T, tr *dataset.Trace, server []sim.TruthRecord) {
	t.Helper()
	words := make([][]string, len(server))
	for i, s := range server {
		words[i] = strings.Fields(s.Prompt)
	}
	pairs, sharing := 0, 0
	for i := range tr.Records {
		for j := i + 1; j < len(tr.Records); j++ {
			a, b := &tr.Records[i], &tr.Records[j]
			k := 0
			for k < len(a.HashIDs) && k < len(b.HashIDs) && a.HashIDs[k] == b.HashIDs[k] {
				k++
			}
			common := 0
			for common < len(words[i]) && common < len(words[j]) && words[i][common] == words[j][common] {
				common++
			}
			pairs++
			shared := min(16*k, a.Input, b.Input)
			if k > 0 {
				sharing++
			}
			if common < shared {
				t.Fatalf("records %d and %d share %d blocks (%d tokens) but their prompts only %d words", i, j, k, shared, common)
			}
			if diff := k < len(a.HashIDs) && k < len(b.HashIDs) && 16*k < a.Input && 16*k < b.Input; diff && common >= 16*(k+1) {
				t.Fatalf("records %d and %d differ in block %d but their prompts share %d words", i, j, k, common)
			}
		}
	}
	t.Logf("%d pairs of records held against their prompts, %d sharing a prefix", pairs, sharing)
	if sharing == 0 {
		t.Fatal("no two records share a prefix: the test proves nothing")
	}
}

// machineBusy says why a result's self-check found its timings suspect
// (the machine busy with other processes, or llmload bound), "" when not.
func machineBusy(res *result.Result) string {
	for _, st := range res.Stages {
		if c := st.Client; c != nil && (c.MachineBusy || c.Bound) {
			return fmt.Sprintf("stage %s: machine busy %v, client-bound %v", st.Stage, c.MachineBusy, c.Bound)
		}
	}
	return ""
}
