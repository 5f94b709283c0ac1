package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/truth"
)

// segmentScenario has a closed sweep and an open-model scenario, so one
// run covers VU and arrival splits; the ttft threshold's bound is a
// parameter, to see the merged gate fail.
const segmentScenario = `
local llm = require("llmload")
options = {
  scenarios = {
    sweep = { executor = "ramping-vus", exec = "sweep",
              stages = { { name = "c2", target = 2, duration = "2s" },
                         { name = "c6", target = 6, duration = "2s" } } },
    open = { executor = "constant-arrival-rate", exec = "open", rate = llm.param("rate", 400),
             arrival = llm.param("arrival", "constant"), duration = "3s", pre_allocated_vus = 40, max_vus = 200 },
  },
  thresholds = { ["ttft.p99"] = llm.param("ttft_p99", "< 5s") },
}
local function chat(vu, tokens)
  llm.chat { messages = { { role = "user", content = ("[vu %d req %d] hello"):format(vu.id, vu.request_id) } },
             max_tokens = tokens }
end
-- The server's log tells the scenarios apart by the tokens it sent.
function open(vu) chat(vu, 8) end
function sweep(vu) chat(vu, 6) end
`

// runAll starts the command lines at once and waits, two minutes at most,
// until every one has exited.
func runAll(t *testing.T, argvs [][]string) []*started {
	t.Helper()
	procs := make([]*started, len(argvs))
	for i, argv := range argvs {
		procs[i] = startCommand(t, argv[0], argv[1:]...)
	}
	deadline := time.After(2 * time.Minute)
	for i, p := range procs {
		select {
		case <-p.exited:
		case <-deadline:
			t.Fatalf("%s still running after 2 minutes:\n%s", strings.Join(argvs[i], " "), p.stderr.String())
		}
	}
	return procs
}

// segmentRuns are the commands of n segment runs of scenario against
// target(i), held at one barrier; prefix(i) wraps each (ip netns exec).
func segmentRuns(dir, scenario string, n int, target func(int) string, prefix func(int) []string, extra ...string) [][]string {
	at := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339Nano)
	var cmds [][]string
	for i := range n {
		args := append(prefix(i), binary, "run", scenario, "--target", target(i), "--seed", "7",
			"--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", at, "-q",
			"--out", filepath.Join(dir, fmt.Sprintf("seg-%d.json", i)),
			"--requests-jsonl", filepath.Join(dir, fmt.Sprintf("seg-%d.jsonl", i)))
		cmds = append(cmds, append(args, extra...))
	}
	return cmds
}

func segmentFiles(dir string, n int) []string {
	var files []string
	for i := range n {
		files = append(files, filepath.Join(dir, fmt.Sprintf("seg-%d.json", i)))
	}
	return files
}

func startMock(t *testing.T, truthLog string) (*started, string) {
	t.Helper()
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "20ms", "--fixed-itl", "2ms", "--truth-log", truthLog)
	return mock, mock.mockURL(t)
}

func readTruth(t *testing.T, path string) []sim.TruthRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := truth.Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func loadResult(t *testing.T, path string) *result.Result {
	t.Helper()
	res, err := readResult(path)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// requestTTFTs are the TTFTs of the successful clean requests of the
// per-request files, outside warmup.
func requestTTFTs(t *testing.T, files ...string) []float64 {
	t.Helper()
	var out []float64
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if v, ok := rec["ttft_ms"].(float64); ok && rec["error_class"] == nil && rec["warmup"] != true {
				out = append(out, v)
			}
		}
		f.Close()
	}
	slices.Sort(out)
	return out
}

// nearestRank is the q-th percentile of sorted values at HDR's rank,
// int(q/100·n + 0.5) (rounded, where the textbook nearest rank is the
// ceiling), which is how llmload's percentiles rank.
func nearestRank(sorted []float64, q float64) float64 {
	k := int(q/100*float64(len(sorted)) + 0.5)
	return sorted[min(max(k, 1), len(sorted))-1]
}

// sameBucket reports whether two milliseconds figures are equal within
// HDR precision: three significant digits, or a microsecond.
func sameBucket(a, b float64) bool { return math.Abs(a-b) <= max(math.Abs(b)*2e-3, 0.0011) }

func totalRequests(r *result.Result) (requests, iterations int64) {
	for _, s := range r.Stages {
		requests += s.Requests
		iterations += s.Iterations + s.DroppedIterations
	}
	return requests, iterations
}

// TestE2ESegmentsMergeToTheWholeRun runs one plan whole and as 4 segment
// processes held at one --start-at barrier against the same server, then
// merges them: the merged result is the server's count, the one seeded
// arrival schedule, and the percentiles of the union of the segments'
// requests.
func TestE2ESegmentsMergeToTheWholeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary six times")
	}
	dir := t.TempDir()
	scenario := writeFile(t, dir, "seg.lua", segmentScenario)

	wholeMock, wholeURL := startMock(t, filepath.Join(dir, "whole-truth.jsonl"))
	if _, stderr, code := runBinary(t, nil, "run", scenario, "--target", wholeURL, "--seed", "7", "--out", filepath.Join(dir, "whole.json"), "-q"); code != 0 {
		t.Fatalf("whole run exited %d:\n%s", code, stderr)
	}
	wholeMock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	whole := loadResult(t, filepath.Join(dir, "whole.json"))

	truthLog := filepath.Join(dir, "truth.jsonl")
	mock, url := startMock(t, truthLog)
	const n = 4
	procs := runAll(t, segmentRuns(dir, scenario, n, func(int) string { return url }, func(int) []string { return nil }))
	for i, c := range procs {
		if c.code != 0 {
			t.Fatalf("segment %d exited %d:\n%s", i, c.code, c.stderr.String())
		}
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	server := readTruth(t, truthLog)

	merged := filepath.Join(dir, "merged.json")
	stdout, stderr, code := runBinary(t, nil, append([]string{"merge", "--out", merged}, segmentFiles(dir, n)...)...)
	if code != 0 {
		t.Fatalf("merge exited %d:\n%s\n%s", code, stdout, stderr)
	}
	t.Log(stdout)
	res := loadResult(t, merged)
	checkMergedRun(t, res, whole, server, requestTTFTs(t, filepath.Join(dir, "seg-0.jsonl"), filepath.Join(dir, "seg-1.jsonl"),
		filepath.Join(dir, "seg-2.jsonl"), filepath.Join(dir, "seg-3.jsonl")))
	if !strings.Contains(stdout, "merged  4 segments") {
		t.Errorf("the summary does not say it is merged:\n%s", stdout)
	}

	// A missing segment is an error naming it; so is one given twice.
	files := segmentFiles(dir, n)
	if _, stderr, code := runBinary(t, nil, append([]string{"merge"}, files[:3]...)...); code != 1 || !strings.Contains(stderr, "segment 3/4 is missing") {
		t.Errorf("merge of 3 of 4 segments: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runBinary(t, nil, "merge", files[0], files[1], files[2], files[1]); code != 1 || !strings.Contains(stderr, "segment 1/4 is in both") {
		t.Errorf("merge with a segment twice: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runBinary(t, nil, "merge", filepath.Join(dir, "whole.json")); code != 1 || !strings.Contains(stderr, "not a segment result") {
		t.Errorf("merge of a whole run: exit %d, %s", code, stderr)
	}
	// report and compare read a merged file like any other.
	if _, stderr, code := runBinary(t, nil, "report", merged); code != 0 {
		t.Errorf("report of the merged result: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runBinary(t, nil, "compare", filepath.Join(dir, "whole.json"), merged); code == 1 || code == 2 {
		t.Errorf("compare of the whole run with the merged one: exit %d, %s", code, stderr)
	}
}

// checkMergedRun holds a merged result against the whole run with the same
// seed, the server's log of the segments' requests and the union of the
// segments' per-request TTFTs.
func checkMergedRun(t *testing.T, res, whole *result.Result, server []sim.TruthRecord, ttfts []float64) {
	t.Helper()
	requests, scheduled := totalRequests(res)
	if got := duringLoad(res, server); requests != got {
		t.Errorf("merged requests %d, the server counted %d during the load (%d with the preflights)", requests, got, len(server))
	}
	_, wholeScheduled := totalRequests(whole)
	var openMerged, openWhole int64
	for _, s := range res.Stages {
		if s.Scenario == "open" {
			openMerged += s.Iterations + s.DroppedIterations
		}
	}
	for _, s := range whole.Stages {
		if s.Scenario == "open" {
			openWhole += s.Iterations + s.DroppedIterations
		}
	}
	// The same seed gives the one schedule, which the segments share out.
	if openMerged != openWhole || openMerged == 0 {
		t.Errorf("open model: %d arrivals due in the merged run, %d in the whole run (scheduled in all: %d and %d)", openMerged, openWhole, scheduled, wholeScheduled)
	}
	// The server received the open model's 400/s: 1,200 arrivals in its
	// 3 s, evenly spaced.
	if got := openAtServer(res, server); got != 1200 || openMerged != 1200 {
		t.Errorf("open model: the server received %d requests in its 3 s (%d due), want 1,200 (400/s)", got, openMerged)
	}
	for _, s := range res.Stages {
		switch {
		case s.Scenario == "sweep" && s.Stage == "c2" && s.VUs != 2, s.Scenario == "sweep" && s.Stage == "c6" && s.VUs != 6:
			t.Errorf("stage %s/%s: %d VUs merged", s.Scenario, s.Stage, s.VUs)
		case s.Scenario == "open":
			if s.TargetRate < 399 || s.TargetRate > 401 {
				t.Errorf("open model target rate %v merged, want 400", s.TargetRate)
			}
			if s.AchievedRate < 360 || s.AchievedRate > 440 {
				t.Errorf("open model delivered %.1f/s, want 400/s", s.AchievedRate)
			}
		}
	}
	if len(ttfts) == 0 {
		t.Fatal("no TTFT in the segments' request files")
	}
	p50, p99 := nearestRank(ttfts, 50), nearestRank(ttfts, 99)
	got50, got99 := mergedTTFT(t, res)
	if !sameBucket(got50, p50) || !sameBucket(got99, p99) {
		t.Errorf("merged TTFT p50 %.3f p99 %.3f ms of %d; the union of the %d requests: %.3f and %.3f", got50, got99, mergedCount(t, res), len(ttfts), p50, p99)
	}
	if len(res.Run.Segments) != 4 || res.Mergeable != nil || res.Run.Segment != nil {
		t.Errorf("merged result lists %d segments (mergeable %v, segment %v)", len(res.Run.Segments), res.Mergeable != nil, res.Run.Segment)
	}
	if len(res.Thresholds) != 1 || !res.Thresholds[0].Passed {
		t.Errorf("merged thresholds: %+v", res.Thresholds)
	}
}

// duringLoad counts the server's records of requests that arrived once
// the load began, which leaves out each segment's preflight request.
func duringLoad(res *result.Result, server []sim.TruthRecord) int64 {
	from := res.Stages[0].Start
	for _, s := range res.Stages {
		from = minTime(from, s.Start)
	}
	n := int64(0)
	for _, r := range server {
		if !r.Arrival.Before(from.Add(-50 * time.Millisecond)) {
			n++
		}
	}
	return n
}

// openAtServer counts the server's records of the open scenario's
// requests: the ones answered with 8 tokens, once the load began.
func openAtServer(res *result.Result, server []sim.TruthRecord) int {
	from := res.Stages[0].Start
	for _, s := range res.Stages {
		from = minTime(from, s.Start)
	}
	n := 0
	for _, r := range server {
		if r.Tokens == 8 && !r.Arrival.Before(from.Add(-50*time.Millisecond)) {
			n++
		}
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// mergedTTFT is the run-wide TTFT p50 and p99 of a result: its stages'
// histograms merged.
func mergedTTFT(t *testing.T, res *result.Result) (p50, p99 float64) {
	t.Helper()
	var ds []metrics.Dist
	for _, s := range res.Stages {
		ds = append(ds, s.TTFT)
	}
	d, err := metrics.MergeDists(ds...)
	if err != nil {
		t.Fatal(err)
	}
	return d.P50, d.P99
}

func mergedCount(t *testing.T, res *result.Result) int64 {
	n := int64(0)
	for _, s := range res.Stages {
		n += s.TTFT.Count
	}
	return n
}
