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
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/toxitest"
)

// The fault tests put Toxiproxy (engine/toxitest) between the binary and
// `llmload mock` in fixed-delay mode, on loopback, and check what the
// result and the per-request records say about each fault. Each run is a
// few seconds.

// faultMock starts the mock answering every request's first token ttft
// after it arrives, then a token every itl, and returns its host:port.
// Extra flags (--truth-log) go last.
func faultMock(t *testing.T, ttft, itl string, extra ...string) string {
	t.Helper()
	args := append([]string{"mock", "--addr", "127.0.0.1:0", "--model", "m", "--fixed-ttft", ttft, "--fixed-itl", itl}, extra...)
	mock := startBinary(t, args...)
	return strings.TrimSuffix(strings.TrimPrefix(mock.mockURL(t), "http://"), "/v1")
}

// faultScript is one stage of vus VUs for dur, each iteration one chat
// request of content asking maxTokens tokens; target holds the body of
// options.target besides its URL (timeouts, on_unreachable).
func faultScript(vus int, dur string, maxTokens int, content, target string) string {
	return fmt.Sprintf(`
local llm = require("llmload")
options = {
  stages = { { name = "s", target = %d, duration = %q } },
  target = { %s },
}
local content = %s
function iteration(vu)
  llm.chat { messages = { { role = "user", content = content } }, max_tokens = %d }
end
`, vus, dur, target, content, maxTokens)
}

// faultRun is what one run through the binary left: its exit code and
// output, its result and its per-request records.
type faultRun struct {
	code    int
	out     string
	res     *result.Result
	records []faultRecord
}

// faultRecord is the part of a --requests-jsonl line the fault tests read.
type faultRecord struct {
	Offset       float64  `json:"start_offset_ms"`
	Status       *int     `json:"status"`
	Class        *string  `json:"error_class"`
	Message      *string  `json:"error_message"`
	TTFB         *float64 `json:"ttfb_ms"`
	TTFT         *float64 `json:"ttft_ms"`
	E2E          *float64 `json:"e2e_ms"`
	TPOT         *float64 `json:"tpot_ms"`
	OutputTokens *int     `json:"output_tokens"`
	ClientTokens *int     `json:"client_output_tokens"`
	Upload       *float64 `json:"upload_ms"`
	BodyBytes    *int64   `json:"body_bytes"`
	Warmup       bool     `json:"warmup"`
}

func (r faultRecord) class() string {
	if r.Class == nil {
		return ""
	}
	return *r.Class
}

// runFaulted runs script against the server at addr (host:port) and reads
// back what it wrote.
func runFaulted(t *testing.T, addr, script string, extra ...string) faultRun {
	t.Helper()
	return runFaultedWhile(t, addr, script, nil, extra...)
}

// runFaultedWhile is runFaulted calling during, when not nil, while the
// run goes on: it adds and removes toxics at chosen moments.
func runFaultedWhile(t *testing.T, addr, script string, during func(), extra ...string) faultRun {
	t.Helper()
	dir := t.TempDir()
	out, jsonl := filepath.Join(dir, "result.json"), filepath.Join(dir, "requests.jsonl")
	args := append([]string{"run", "--quiet", "--target", "http://" + addr + "/v1", "--model", "m",
		"--out", out, "--requests-jsonl", jsonl}, extra...)
	s := startBinary(t, append(args, writeScript(t, script))...)
	if during != nil {
		during()
	}
	select {
	case <-s.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("run still going after 2 minutes:\n%s", s.stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("exit %d, no result file:\n%s", s.code, tail(s.stdout.String()+s.stderr.String(), 3000))
	}
	run := faultRun{code: s.code, out: s.stdout.String() + s.stderr.String(), res: readBack(t, out)}
	f, err := os.Open(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r faultRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", jsonl, err, sc.Text())
		}
		if !r.Warmup {
			run.records = append(run.records, r)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(run.res.Stages) != 1 {
		t.Fatalf("%d stages, want 1:\n%s", len(run.res.Stages), run.out)
	}
	return run
}

// classes counts records by error class ("" for success).
func classes(records []faultRecord) map[string]int {
	n := map[string]int{}
	for _, r := range records {
		n[r.class()]++
	}
	return n
}

// TestFaultLatencyAddsToTTFTOnly: 50 ms (jitter 5 ms) on the answer's way
// back delays every byte of it alike, so TTFT grows by the delay and the
// per-token time does not move.
//
// The link's true delay is the toxic's plus Toxiproxy's own scheduling
// (its timer and goroutine hops, a fraction of a millisecond), which no
// client sees apart. So the delay is taken in two steps through one
// proxy, each against a run without the toxic: a fixed 50 ms, by which
// TTFT must grow by at least 50 ms and at most 1 ms more; then 50 ms with
// a jitter of 5, which Toxiproxy draws in whole milliseconds from 45 to
// 54 (latency + rand(2 × jitter) − jitter), so the median moves 0.5 ms
// below the fixed one: within 1 ms of that. 12 VUs give some 250
// requests a run, enough for the median of the draw to stay within about
// a quarter of a millisecond of its own.
func TestFaultLatencyAddsToTTFTOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary three times")
	}
	tp := toxitest.Start(t)
	mock := faultMock(t, "20ms", "5ms")
	proxy := tp.Proxy(t, mock)
	script := faultScript(12, "3s", 16, `"hi"`, "")
	plain := runFaulted(t, proxy, script)
	name := tp.AddToxic(t, proxy, toxitest.Toxic{Type: "latency", Attributes: map[string]any{"latency": 50}})
	fixed := runFaulted(t, proxy, script)
	tp.RemoveToxic(t, proxy, name)
	tp.AddToxic(t, proxy, toxitest.Toxic{Type: "latency", Attributes: map[string]any{"latency": 50, "jitter": 5}})
	jittered := runFaulted(t, proxy, script)
	for _, r := range []faultRun{plain, fixed, jittered} {
		if r.code != 0 || r.res.Stages[0].Failed != 0 {
			t.Fatalf("exit %d, %d failed:\n%s", r.code, r.res.Stages[0].Failed, r.out)
		}
	}
	p, f, j := plain.res.Stages[0], fixed.res.Stages[0], jittered.res.Stages[0]
	addedFixed, addedJitter := f.TTFT.P50-p.TTFT.P50, j.TTFT.P50-p.TTFT.P50
	t.Logf("TTFT p50 %.3f → %.3f ms fixed (+%.3f), %.3f ms with jitter (+%.3f), %d requests; TPOT p50 %.3f → %.3f, %.3f ms",
		p.TTFT.P50, f.TTFT.P50, addedFixed, j.TTFT.P50, addedJitter, j.Requests, p.TPOT.P50, f.TPOT.P50, j.TPOT.P50)
	if addedFixed < 50-0.25 || addedFixed > 51 {
		t.Errorf("TTFT p50 grew by %.3f ms through a 50 ms link, want 50 to 51 (the delay, and at most 1 ms of Toxiproxy's own and llmload's)", addedFixed)
	}
	if want := addedFixed - 0.5; math.Abs(addedJitter-want) > 1 {
		t.Errorf("TTFT p50 grew by %.3f ms through a 50 ms link with a jitter of 5 ms, want %.3f ± 1 (the fixed link's, less the draw's 0.5 ms)", addedJitter, want)
	}
	for _, r := range []metrics.StageSummary{f, j} {
		if diff := r.TPOT.P50 - p.TPOT.P50; math.Abs(diff) > 0.1 {
			t.Errorf("TPOT p50 moved by %.3f ms through a delay of every byte alike", diff)
		}
	}
}

// TestFaultSlicerKeepsEveryEvent: the answer cut into segments of about 8
// bytes, 200 µs apart, loses no server-sent event: every request succeeds
// with all its tokens, and the slicing shows in ITL.
func TestFaultSlicerKeepsEveryEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tp := toxitest.Start(t)
	mock := faultMock(t, "20ms", "5ms")
	proxy := tp.Proxy(t, mock)
	tp.AddToxic(t, proxy, toxitest.Toxic{Type: "slicer",
		Attributes: map[string]any{"average_size": 32, "size_variation": 0, "delay": 2000}})
	run := runFaulted(t, proxy, faultScript(2, "3s", 16, `"hi"`, ""))
	s := run.res.Stages[0]
	t.Logf("%d requests, %d failed, %d output tokens; TTFT p50 %.3f ms, ITL p50 %.3f min %.3f ms, TPOT p50 %.3f ms; sources %v",
		s.Requests, s.Failed, s.OutputTokens, s.TTFT.P50, s.ITL.P50, s.ITL.Min, s.TPOT.P50, s.TokensSource)
	b, _ := json.Marshal(s.ITL)
	t.Logf("ITL %s", b)
	if run.code != 0 || s.Failed != 0 || s.Requests == 0 {
		t.Fatalf("exit %d, %d of %d failed: %v\n%s", run.code, s.Failed, s.Requests, s.Errors, run.out)
	}
	if s.OutputTokens != 16*s.Requests {
		t.Errorf("%d output tokens in %d requests, want 16 each", s.OutputTokens, s.Requests)
	}
	// The link delivers 32 bytes every 2 ms, an event of about 240 bytes
	// in about 15 ms: slower than the server's 5 ms, so the slicing sets
	// the pace of the tokens.
	if s.TPOT.P50 < 15 || s.ITL.Mean < 15 {
		t.Errorf("TPOT p50 %.3f ms, ITL mean %.3f ms through the slicer, want at least 15", s.TPOT.P50, s.ITL.Mean)
	}
	for i, r := range run.records {
		if r.class() != "" || r.OutputTokens == nil || *r.OutputTokens != 16 {
			t.Fatalf("request %d: class %q, %v tokens", i, r.class(), r.OutputTokens)
		}
	}
}

// TestFaultBandwidthUpload: a 1 MB prompt over a 1,250 KB/s link to the
// server takes about 0.8 s to send; the records say so beside TTFT, as
// the upload's own figure. The client's kernel takes the body at once;
// the upload ends when Toxiproxy has acknowledged it, which its buffers
// (its socket's, which grows with the connection, and the toxic's chunks)
// do 0.1 to 0.4 s before the server has it here, and in CI, as its buffers
// grow over a connection's requests, up to 0.65 s (uploads of 742, 317,
// 215 and 397 ms, TTFT 862–870 ms). So the test asks what holds however
// much Toxiproxy buffers: an upload far above a write into the client's
// kernel buffer (a few ms for 1 MB), and within TTFT.
func TestFaultBandwidthUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tp := toxitest.Start(t)
	// The prompt is some 260,000 tokens by the mock's estimate.
	mock := faultMock(t, "20ms", "5ms", "--max-context", "400000")
	proxy := tp.Proxy(t, mock)
	tp.AddToxic(t, proxy, toxitest.Toxic{Type: "bandwidth", Stream: toxitest.Upstream, Attributes: map[string]any{"rate": 1250}})
	run := runFaulted(t, proxy, faultScript(1, "3s", 4, `string.rep("lorem ipsum ", 87000)`, ""))
	s := run.res.Stages[0]
	b, _ := json.Marshal(s)
	t.Logf("%d requests, %d failed; TTFB p50 %.3f, TTFT p50 %.3f, connect p50 %.3f ms; stage: %s", s.Requests, s.Failed, s.TTFB.P50, s.TTFT.P50, s.Connect.P50, b)
	for _, r := range run.records {
		t.Logf("record: upload %v ttfb %v ttft %v body %v class %q", deref(r.Upload), deref(r.TTFB), deref(r.TTFT), derefI(r.BodyBytes), r.class())
		// 1,044,124 bytes at 1,250 KB/s take 0.82 s to reach the server.
		if r.BodyBytes == nil || *r.BodyBytes < 1_000_000 || r.TTFB == nil || *r.TTFB < 750 {
			t.Errorf("body %v bytes, TTFB %v ms: want the 1 MB body and its 0.8 s on the link in TTFB", derefI(r.BodyBytes), deref(r.TTFB))
		}
		if r.class() != "" || r.Upload == nil || *r.Upload < 50 || r.TTFT == nil || *r.Upload > *r.TTFT {
			t.Errorf("class %q: upload %v ms, TTFT %v: want an answer, and an upload of at least 50 ms of the 0.8 s on the link, within TTFT", r.class(), deref(r.Upload), deref(r.TTFT))
		}
	}
	if len(run.records) == 0 {
		t.Error("no request")
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func derefI(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// logRun logs what a faulted run reported, for the report of measured
// behaviour.
func logRun(t *testing.T, run faultRun) {
	t.Helper()
	s := run.res.Stages[0]
	t.Logf("exit %d; %d requests (%d ok, %d failed) errors %v; %d records by class %v; outages %+v; verdict %q",
		run.code, s.Requests, s.OK, s.Failed, s.Errors, len(run.records), classes(run.records),
		outagesOf(run.res), run.res.Run.Verdict)
	t.Logf("TTFT p50 %.1f max %.1f, E2E max %.1f ms; warnings %q", s.TTFT.P50, s.TTFT.Max, s.E2E.Max, run.res.Warnings)
	for _, r := range run.records {
		if r.class() != "" {
			t.Logf("  failed at %.0f ms: %s status %v tokens %v client %v ttft %v e2e %v: %s", r.Offset, r.class(),
				derefInt(r.Status), derefInt(r.OutputTokens), derefInt(r.ClientTokens), deref(r.TTFT), deref(r.E2E), *r.Message)
		}
	}
	t.Logf("output tail:\n%s", tail(run.out, 1500))
}

func derefInt(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// faultTarget bounds every wait at 1 s, so that a fault ends requests
// within the few seconds a test runs.
const faultTarget = `ttft_timeout = "1s", idle_timeout = "1s", connect_timeout = "1s"`

// TestFaultTimeoutEndsRequestsAtTheirBounds: the link stops passing the
// answers for 4 s mid-run, then passes them again. The requests caught
// mid-stream end as timeout_idle, those sent into the stall as
// timeout_ttft, each after the 1 s bound; nothing is lost, the stall is
// reported as an outage with its start and length, the run resumes, and
// on_unreachable's default fails it.
func TestFaultTimeoutEndsRequestsAtTheirBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tp := toxitest.Start(t)
	mock := faultMock(t, "20ms", "50ms")
	proxy := tp.Proxy(t, mock)
	var stalled, resumed time.Time
	began := time.Now()
	run := runFaultedWhile(t, proxy, faultScript(4, "9s", 40, `"hi"`, faultTarget), func() {
		time.Sleep(2500 * time.Millisecond)
		name := tp.AddToxic(t, proxy, toxitest.Toxic{Type: "timeout", Attributes: map[string]any{"timeout": 0}})
		stalled = time.Now()
		time.Sleep(4 * time.Second)
		tp.RemoveToxic(t, proxy, name)
		resumed = time.Now()
	})
	logRun(t, run)
	t.Logf("stalled %v to %v after the binary started; verdict %s; warnings %q", stalled.Sub(began), resumed.Sub(began), run.res.Run.Verdict, run.res.Warnings)
	s, n := run.res.Stages[0], classes(run.records)
	if int64(len(run.records)) != s.Requests {
		t.Errorf("%d records of %d requests", len(run.records), s.Requests)
	}
	if n[engine.ErrTimeoutIdle] == 0 || n[engine.ErrTimeoutTTFT] == 0 {
		t.Errorf("classes %v: want the requests caught mid-stream as timeout_idle and those sent into the stall as timeout_ttft", n)
	}
	for class := range n {
		switch class {
		case "", engine.ErrTimeoutIdle, engine.ErrTimeoutTTFT, engine.ErrConnReset:
		default:
			t.Errorf("a request failed as %s", class)
		}
	}
	// A timed-out request's VU sends its next one at once: the sends into
	// the stall come one bound (1 s) apart.
	var starts []float64
	for _, r := range run.records {
		if r.class() == engine.ErrTimeoutTTFT {
			starts = append(starts, r.Offset)
		}
	}
	slices.Sort(starts)
	for i := 4; i < len(starts); i++ {
		if gap := starts[i] - starts[i-4]; gap < 950 || gap > 1300 {
			t.Errorf("timeout_ttft requests sent %.0f ms after the one before on the same VU, want the 1 s bound", gap)
		}
	}
	var after int
	for _, r := range run.records {
		if r.class() == "" && r.Offset > float64(resumed.Sub(began)/time.Millisecond) {
			after++
		}
	}
	if after == 0 {
		t.Errorf("no request succeeded after the link came back")
	}
	outages := outagesOf(run.res)
	if len(outages) != 1 {
		t.Fatalf("outages %+v, want the stall", outages)
	}
	o := outages[0]
	if d := o.Start.Sub(stalled); d < -100*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("the outage began %v after the stall, want within the 1 s bound of it", d)
	}
	if d := o.End.Sub(resumed); !o.Recovered() || d < -100*time.Millisecond || d > 2*time.Second {
		t.Errorf("the outage ended %v after the link came back (recovered %v)", d, o.Recovered())
	}
	if o.Classes[engine.ErrTimeoutTTFT] < 3 {
		t.Errorf("outage classes %v, want the requests sent into the stall", o.Classes)
	}
	if run.code != exitError || !strings.Contains(run.out, "target unreachable") || !strings.Contains(run.out, "not even the response headers came") {
		t.Errorf("exit %d, want 1 naming the outage:\n%s", run.code, tail(run.out, 2000))
	}
}

// TestFaultResetMidStreamLosesNothing: every connection reset 150 ms after
// it opens (the answers take 320 ms) cuts every answer mid-stream; each
// request is in the records with its class, and the partial answers keep
// the tokens they got.
func TestFaultResetMidStreamLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tp := toxitest.Start(t)
	mock := faultMock(t, "20ms", "20ms")
	proxy := tp.Proxy(t, mock)
	// After the preflight, which the resets would fail.
	run := runFaultedWhile(t, proxy, faultScript(2, "3s", 16, `"hi"`, faultTarget+`, on_unreachable = "warn"`), func() {
		time.Sleep(time.Second)
		tp.AddToxic(t, proxy, toxitest.Toxic{Type: "reset_peer", Attributes: map[string]any{"timeout": 150}})
	})
	logRun(t, run)
	checkCutStreams(t, run, engine.ErrConnReset)
}

// TestFaultLimitDataLosesNothing: every connection closed after 2,000
// bytes of answer cuts the answers after about 7 of their 16 tokens.
func TestFaultLimitDataLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	tp := toxitest.Start(t)
	mock := faultMock(t, "20ms", "20ms")
	proxy := tp.Proxy(t, mock)
	tp.AddToxic(t, proxy, toxitest.Toxic{Type: "limit_data", Attributes: map[string]any{"bytes": 2000}})
	run := runFaulted(t, proxy, faultScript(2, "3s", 16, `"hi"`, faultTarget))
	logRun(t, run)
	checkCutStreams(t, run, engine.ErrStreamTruncated)
}

// checkCutStreams: every request is in the records; those that failed
// after their answer began are stream_truncated or want, with the partial
// answer's tokens counted.
func checkCutStreams(t *testing.T, run faultRun, want string) {
	t.Helper()
	s := run.res.Stages[0]
	if int64(len(run.records)) != s.Requests || s.Requests == 0 {
		t.Fatalf("%d records of %d requests", len(run.records), s.Requests)
	}
	var cut, partial int
	for _, r := range run.records {
		if r.class() == "" {
			continue
		}
		if r.class() != want && r.class() != engine.ErrStreamTruncated && r.class() != engine.ErrConnReset {
			t.Errorf("a request failed as %s", r.class())
		}
		if r.TTFT != nil {
			cut++
			if r.OutputTokens != nil && *r.OutputTokens > 0 && *r.OutputTokens < 16 {
				partial++
			}
		}
	}
	if cut == 0 || partial != cut {
		t.Errorf("%d answers cut after their first token, %d with a partial token count", cut, partial)
	}
	if got := s.Errors[want]; got == 0 {
		t.Errorf("no %s among %v", want, s.Errors)
	}
}

// outagesOf is the outages the result recorded; nil when none.
func outagesOf(res *result.Result) []backoff.Outage { return res.Run.Outages }
