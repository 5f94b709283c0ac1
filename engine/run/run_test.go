package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// fakeClient answers every request at once with fixed timings.
type fakeClient struct{ calls atomic.Int64 }

func (c *fakeClient) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	c.calls.Add(1)
	return &engine.Result{Start: time.Now(), Status: 200, TTFB: 5 * time.Millisecond, TTFT: 10 * time.Millisecond,
		TTFC: 10 * time.Millisecond, E2E: 50 * time.Millisecond, TPOT: 4 * time.Millisecond,
		ITL: []time.Duration{4 * time.Millisecond}, OutputTokens: 10, TokensSource: engine.TokensFromUsage,
		FinishReason: "stop", Streamed: true, TextEvents: 10}
}

// fakeRunner makes VUs that send one request per iteration, or run iterate
// instead when set.
type fakeRunner struct {
	deps    RunnerDeps
	iterate func(ctx context.Context, it engine.Iteration) error
}

func (r *fakeRunner) NewVU(ctx context.Context, id int) (engine.VU, error) { return &fakeVU{r}, nil }

type fakeVU struct{ r *fakeRunner }

func (v *fakeVU) RunIteration(ctx context.Context, it engine.Iteration) error {
	if v.r.iterate != nil {
		return v.r.iterate(ctx, it)
	}
	res := v.r.deps.Client.Chat(ctx, &engine.ChatRequest{Model: v.r.deps.Model})
	v.r.deps.Sink.Sample(engine.Sample{Scenario: it.Scenario, Stage: it.Stage, Warmup: it.Warmup, Result: *res})
	select { // a VU that loops hot would only measure the test machine
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil
}

func (v *fakeVU) Close() error { return nil }

// fakeLifecycle adds a teardown that ignores its context, as a script
// stuck in a Go call would.
type fakeLifecycle struct {
	*fakeRunner
	teardown time.Duration
}

func (f *fakeLifecycle) Setup(ctx context.Context) error { return nil }
func (f *fakeLifecycle) Teardown(ctx context.Context) error {
	time.Sleep(f.teardown)
	return nil
}

func testPlan(d time.Duration) plan.Plan {
	return plan.Plan{Script: "fake.lua", Seed: 1, Target: plan.Target{Model: "m"},
		Scenarios: []plan.Scenario{{
			Name: "s", Executor: plan.ExecutorRampingVUs, Exec: "chat",
			Stages:       []plan.Stage{{Name: "c2", Target: 2, Duration: d}},
			GracefulStop: time.Second, GracefulRampDown: time.Second,
		}}}
}

// testConfig is a run of p with a fake client and r's VUs, writing the
// result file in a temporary directory.
func testConfig(t *testing.T, p plan.Plan, r *fakeRunner) Config {
	t.Helper()
	set, err := ParseThresholds(p)
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Plan: p, Thresholds: set, Client: &fakeClient{},
		NewRunner: func(d RunnerDeps) engine.Runner { r.deps = d; return r },
		Outputs:   Outputs{Out: filepath.Join(t.TempDir(), "result.json")},
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func readBack(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no result file: %v", err)
	}
	defer f.Close()
	res, err := result.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestHappyRun(t *testing.T) {
	var summary strings.Builder
	cfg := testConfig(t, testPlan(300*time.Millisecond), &fakeRunner{})
	cfg.Summary = &summary
	res, out, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out != (Outcome{}) {
		t.Errorf("outcome = %+v, want passed", out)
	}
	if got, want := len(res.Stages), 1; got != want {
		t.Fatalf("%d stages, want %d", got, want)
	}
	if st := res.Stages[0]; st.Stage != "c2" || st.Requests == 0 || !st.Complete {
		t.Errorf("stage = %s, %d requests, complete %v; want c2, some, complete", st.Stage, st.Requests, st.Complete)
	}
	if !res.Run.Complete {
		t.Error("run not complete")
	}
	if got := readBack(t, cfg.Outputs.Out); got.Stages[0].Requests != res.Stages[0].Requests {
		t.Errorf("file has %d requests, result %d", got.Stages[0].Requests, res.Stages[0].Requests)
	}
	if !strings.Contains(summary.String(), "c2") {
		t.Errorf("summary lacks the stage:\n%s", summary.String())
	}
	// The process's own cost is recorded, and read back from the file.
	if p := readBack(t, cfg.Outputs.Out).Run.Process; runtime.GOOS == "linux" &&
		(p == nil || p.MaxRSSMB <= 0 || p.CPUS() <= 0 || p.CPUS() > 60) {
		t.Errorf("run.process = %+v, want the CPU and memory of the load", p)
	}
}

func TestOutcomes(t *testing.T) {
	scriptError := func(ctx context.Context, it engine.Iteration) error {
		time.Sleep(5 * time.Millisecond)
		return errors.New("fake.lua:3: boom")
	}
	tests := map[string]struct {
		iterate    func(ctx context.Context, it engine.Iteration) error
		thresholds []plan.ThresholdSpec
		gate       Gate
		want       Verdict
		reason     string // prefix
	}{
		"nothing measured": {iterate: scriptError, want: Failed, reason: "nothing measured"},
		"threshold fails": {thresholds: []plan.ThresholdSpec{{Expr: "ttft.p99", Conditions: []string{"< 1ms"}}},
			want: GateFailed, reason: "some thresholds failed"},
		"threshold holds": {thresholds: []plan.ThresholdSpec{{Expr: "ttft.p99", Conditions: []string{"< 1s"}}},
			want: Passed},
		"gate fails": {gate: func(*result.Result) (string, error) { return "1 significant regression", nil },
			want: GateFailed, reason: "1 significant regression"},
		"gate passes": {gate: func(*result.Result) (string, error) { return "", nil }, want: Passed},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := testPlan(200 * time.Millisecond)
			p.Thresholds = tt.thresholds
			cfg := testConfig(t, p, &fakeRunner{iterate: tt.iterate})
			cfg.Gate = tt.gate
			_, out, err := Run(testContext(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != tt.want || !strings.HasPrefix(out.Reason, tt.reason) {
				t.Errorf("outcome = %+v, want verdict %d, reason starting %q", out, tt.want, tt.reason)
			}
		})
	}
}

func TestInterruptedRunKeepsTheResult(t *testing.T) {
	cfg := testConfig(t, testPlan(time.Minute), &fakeRunner{})
	ctx, cancel := context.WithCancel(testContext(t))
	time.AfterFunc(300*time.Millisecond, cancel)
	res, out, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out, (Outcome{Failed, "run interrupted: the results above cover what was sent"}); got != want {
		t.Errorf("outcome = %+v, want %+v", got, want)
	}
	if res.Run.Complete || len(res.Stages) != 1 || res.Stages[0].Requests == 0 || res.Stages[0].Complete {
		t.Errorf("result: complete %v, stages %+v; want one incomplete stage with requests", res.Run.Complete, res.Stages)
	}
	if got := readBack(t, cfg.Outputs.Out); got.Run.Complete || got.Stages[0].Requests != res.Stages[0].Requests {
		t.Errorf("result file differs from the result: %+v", got.Run)
	}
}

// TestAbortReturnsAtOnce: with Abort closed, Run returns without waiting
// for a teardown that ignores its context, and the files hold what was
// collected.
func TestAbortReturnsAtOnce(t *testing.T) {
	r := &fakeRunner{}
	cfg := testConfig(t, testPlan(time.Minute), r)
	cfg.Outputs.CSV = filepath.Join(t.TempDir(), "requests.csv")
	cfg.NewRunner = func(d RunnerDeps) engine.Runner { r.deps = d; return &fakeLifecycle{r, time.Hour} }
	ctx, cancel := context.WithCancel(testContext(t))
	abort := make(chan struct{})
	cfg.Abort = abort
	time.AfterFunc(300*time.Millisecond, cancel)
	time.AfterFunc(600*time.Millisecond, func() { close(abort) })
	start := time.Now()
	res, out, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Run took %v, want it to return soon after Abort", took)
	}
	if out.Verdict != Failed || !strings.HasPrefix(out.Reason, "second interrupt") {
		t.Errorf("outcome = %+v, want failed by a second interrupt", out)
	}
	if res.Run.Complete || res.Stages[0].Requests == 0 {
		t.Errorf("result: complete %v, %d requests; want incomplete with requests", res.Run.Complete, res.Stages[0].Requests)
	}
	rows, err := os.ReadFile(cfg.Outputs.CSV)
	if err != nil || strings.Count(string(rows), "\n") < 2 {
		t.Errorf("per-request CSV not flushed (%v): %q", err, rows)
	}
}

// TestMemoryBoundStopsAtTheLine: the run stops when the bound is crossed,
// and the outcome names the line the canceled iteration stopped at.
func TestMemoryBoundStopsAtTheLine(t *testing.T) {
	var used atomic.Uint64
	mem := memlimit.Start(100*memlimit.MB, memlimit.Options{Interval: 10 * time.Millisecond,
		Read: func() uint64 { return used.Load() }, NoGCLimit: true})
	defer mem.Stop()
	cfg := testConfig(t, testPlan(time.Minute), &fakeRunner{iterate: func(ctx context.Context, it engine.Iteration) error {
		<-ctx.Done()
		return errors.New("fake.lua:7: iteration interrupted: " + context.Cause(ctx).Error())
	}})
	cfg.Memory = mem
	time.AfterFunc(200*time.Millisecond, func() { used.Store(200 * memlimit.MB) })
	res, out, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{Failed, "fake.lua:7: memory limit 100 MB exceeded: the run stopped; the results above cover what was sent"}
	if out != want {
		t.Errorf("outcome = %+v, want %+v", out, want)
	}
	if got, want := res.Run.Aborted, "stopped: fake.lua:7: memory limit 100 MB exceeded"; got != want {
		t.Errorf("aborted = %q, want %q", got, want)
	}
}

// TestEarlyErrorsLeakNothing: a run that fails before load (an output that
// cannot be opened) leaves no goroutine behind, the collector's included.
func TestEarlyErrorsLeakNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		cfg := testConfig(t, testPlan(time.Second), &fakeRunner{})
		cfg.Outputs.CSV = filepath.Join(t.TempDir(), "missing", "requests.csv")
		if _, _, err := Run(testContext(t), cfg); err == nil || !strings.Contains(err.Error(), "per-request records") {
			t.Fatalf("err = %v, want the CSV named", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		t.Errorf("%d goroutines after 20 failed runs, %d before", got, before)
	}
}

func TestMemoryError(t *testing.T) {
	crossed := memlimit.Start(memlimit.MB, memlimit.Options{Read: func() uint64 { return 2 * memlimit.MB }, NoGCLimit: true})
	<-crossed.Context().Done()
	within := memlimit.Start(memlimit.MB, memlimit.Options{Read: func() uint64 { return 0 }, NoGCLimit: true})
	defer within.Stop()
	tests := map[string]struct {
		mem  *memlimit.Watcher
		err  string
		want string
	}{
		"line":   {crossed, "big.lua:2: init interrupted: context canceled", "big.lua:2: memory limit 1 MB exceeded (at init: the script's top level)"},
		"noline": {crossed, "big.lua: init interrupted", "memory limit 1 MB exceeded (at init: the script's top level)"},
		"within": {within, "big.lua:2: boom", "big.lua:2: boom"},
		"nil":    {nil, "big.lua:2: boom", "big.lua:2: boom"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := MemoryError(tt.mem, errors.New(tt.err)).Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A busy server that answers the preflight with a 503 first is retried,
// and the log says so before the load starts.
func TestPreflightRetriesAreLogged(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := testPlan(100 * time.Millisecond)
	p.Target.BaseURL = srv.URL + "/v1"
	cfg := testConfig(t, p, &fakeRunner{})
	cfg.Client = nil
	var log strings.Builder
	cfg.Log = func(format string, a ...any) { fmt.Fprintf(&log, format+"\n", a...) }
	if _, _, err := Run(testContext(t), cfg); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.Contains(got, "preflight retried: 503") {
		t.Errorf("log does not say the preflight was retried:\n%s", got)
	}
}

func TestInsecureTLS(t *testing.T) {
	off := plan.TLS{InsecureSkipVerify: true}
	tests := map[string]struct {
		p    plan.Plan
		want string
	}{
		"verified":  {plan.Plan{Target: plan.Target{BaseURL: "https://h/v1"}}, ""},
		"simulator": {plan.Plan{Target: plan.Target{TLS: off}}, ""},
		"one target": {plan.Plan{Target: plan.Target{BaseURL: "https://u:pw@h/v1?api_key=k", TLS: off}},
			"TLS verification is off (insecure_skip_verify): any certificate was accepted from https://h/v1?api_key=REDACTED, " +
				"so nothing proves the figures are the intended server's rather than a machine's in between; " +
				"give the server's CA as ca_cert (--ca-cert) instead"},
		"several targets": {plan.Plan{Targets: []plan.Target{{Name: "a", BaseURL: "https://a/v1", TLS: off},
			{Name: "b", BaseURL: "https://b/v1"}, {Name: "c", BaseURL: "https://c/v1", TLS: off}}},
			"TLS verification is off (insecure_skip_verify): any certificate was accepted from https://a/v1, https://c/v1, " +
				"so nothing proves the figures are the intended server's rather than a machine's in between; " +
				"give the server's CA as ca_cert (--ca-cert) instead"},
	}
	for name, tt := range tests {
		if got := InsecureTLS(tt.p); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, tt.want)
		}
	}
}

// TestInsecureRunIsWarned: a target whose certificate nobody trusts is
// reached with insecure_skip_verify, and the summary, the result and its
// file say loudly that nothing was verified.
func TestInsecureRunIsWarned(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := testPlan(100 * time.Millisecond)
	p.Target.BaseURL, p.Target.TLS.InsecureSkipVerify = srv.URL+"/v1", true
	cfg := testConfig(t, p, &fakeRunner{})
	cfg.Client = nil // the real client, as the run builds it
	var summary strings.Builder
	cfg.Summary = &summary
	res, _, err := Run(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := InsecureTLS(p)
	if !slices.Contains(res.Warnings, want) || !slices.Contains(readBack(t, cfg.Outputs.Out).Warnings, want) {
		t.Errorf("warnings %q lack %q", res.Warnings, want)
	}
	if !strings.Contains(summary.String(), "TLS verification is off (insecure_skip_verify)") {
		t.Errorf("summary lacks the warning:\n%s", summary.String())
	}
}

// A barrier that refuses to start the load ends the run with its error
// and writes no result file: nothing was sent, and the file may be
// another attempt's of the same segment.
func TestRefusedBarrierWritesNoResult(t *testing.T) {
	cfg := testConfig(t, testPlan(time.Second), &fakeRunner{})
	refused := errors.New("segment 2/4 arrived too late")
	cfg.Barrier = func(context.Context) (time.Time, error) { return time.Time{}, refused }
	res, _, err := Run(testContext(t), cfg)
	if !errors.Is(err, refused) || res != nil {
		t.Fatalf("Run = %v, %v; want the barrier's error and no result", res, err)
	}
	if _, err := os.Stat(cfg.Outputs.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("result file: %v, want none", err)
	}
}
