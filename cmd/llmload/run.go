package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/compare"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/selfcheck"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/engine/verdict"
	"github.com/llmload/llmload/luabind"
)

const runUsage = `Usage: llmload run [flags] SCENARIO.lua

Runs the scenario and prints per-stage percentiles. With no target set (no
--target, no LLMLOAD_BASE_URL, no options.target.base_url) it runs against the
built-in simulator on 127.0.0.1.

Target precedence: flag, then environment (LLMLOAD_BASE_URL, LLMLOAD_API_KEY,
LLMLOAD_MODEL), then options.target in the script.

Flags:
`

// runFlags are the parsed flags of 'llmload run'.
type runFlags struct {
	target, model, apiKey string
	outputs
	quiet    bool
	sets     []string
	seed     int64
	baseline string
	gate     gateFlags
}

// outputs are the files a run writes.
type outputs struct {
	out   string // result JSON, at the end
	csv   string // per-request CSV, as the run goes
	jsonl string // per-request JSON lines, as the run goes
	html  string // HTML report, at the end
	stage string // per-stage CSV, at the end
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, string, error) {
	var f runFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, runUsage+fs.FlagUsages()) }
	fs.StringVar(&f.target, "target", "", "base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
	fs.StringVar(&f.model, "model", "", "model name (default: the script's, else the server's first model)")
	fs.StringVar(&f.apiKey, "api-key", "", "API key (prefer LLMLOAD_API_KEY: flags show in process lists)")
	fs.StringVar(&f.out, "out", "", "write the results as JSON to this file")
	fs.StringVar(&f.csv, "csv", "", "write one CSV row per request to this file, as the run goes")
	fs.StringVar(&f.jsonl, "requests-jsonl", "", "write one JSON line per request to this file, as the run goes")
	fs.StringVar(&f.html, "html", "", "write a self-contained HTML report to this file")
	fs.StringVar(&f.stage, "csv-stages", "", "write one CSV row per stage to this file")
	fs.StringVar(&f.baseline, "baseline", "", "compare the results with this earlier result file; exit 99 on a regression")
	// The gate flags go through a set of their own, so that every flag
	// gateFlags registers, now or later, is known to need --baseline.
	gfs := pflag.NewFlagSet("gate", pflag.ContinueOnError)
	f.gate.register(gfs)
	fs.AddFlagSet(gfs)
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print only the final summary")
	fs.StringArrayVar(&f.sets, "set", nil, "set a script parameter, key=value (read with llm.param); repeatable")
	fs.Int64Var(&f.seed, "seed", 0, "run seed for reproducible randomness (0: from the clock)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, "", errHelp
		}
		return nil, "", usagef("run: %v", err)
	}
	if fs.NArg() != 1 {
		return nil, "", usagef("run: expected one SCENARIO.lua, got %s", arguments(fs.NArg()))
	}
	if err := needBaseline(gfs, f.baseline); err != nil {
		return nil, "", err
	}
	return &f, fs.Arg(0), nil
}

// needBaseline refuses gate flags given without --baseline: they would
// silently do nothing.
func needBaseline(gate *pflag.FlagSet, baseline string) error {
	if baseline != "" {
		return nil
	}
	var set []string
	gate.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed {
			set = append(set, "--"+fl.Name)
		}
	})
	if len(set) == 0 {
		return nil
	}
	verb := "has"
	if len(set) > 1 {
		verb = "have"
	}
	return usagef("run: %s %s no effect without --baseline BASE.json", strings.Join(set, ", "), verb)
}

// arguments says "1 argument" or "n arguments".
func arguments(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

// parseSets turns --set key=value pairs into script parameters.
func parseSets(sets []string) (map[string]string, error) {
	params := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usagef("run: --set %q: want key=value", s)
		}
		params[strings.TrimSpace(k)] = v
	}
	return params, nil
}

// runGCPercent is the GC target during a run unless GOGC is set: fewer
// collections mean fewer stop-the-world pauses landing between an arrival's
// intended time and its start (measured: at 2,000 req/s schedule-lag p99
// fell from about 4 ms to under 0.5 ms going from 100 to 400).
const runGCPercent = 400

func runCmd(args []string, stdout, stderr io.Writer) error {
	f, path, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(runGCPercent))
	}
	params, err := parseSets(f.sets)
	if err != nil {
		return err
	}
	if err := checkOutputs(f.out, f.csv, f.jsonl, f.html, f.stage); err != nil {
		return err
	}
	// --seed wins over options.seed; with neither, Compile picks one from
	// the clock and reports it in the plan.
	script, err := luabind.Compile(path, luabind.Options{Params: params, Seed: f.seed})
	if err != nil {
		return err
	}
	plan := script.Plan()
	plan.Target = resolveTarget(plan.Target, f, os.LookupEnv)
	if err := checkMetricsURL(plan.Target.MetricsURL); err != nil {
		return fmt.Errorf("%s: options.target.metrics_url: %w", path, err)
	}
	set, err := parseThresholds(plan)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	say := func(format string, a ...any) {
		if !f.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	r := &runner{path: path, plan: plan, script: script, thresholds: set, say: say, quiet: f.quiet, stderr: stderr}
	if f.baseline != "" {
		if r.gateOpts, err = f.gate.options(); err != nil {
			return err
		}
		if r.baseline, err = readResult(f.baseline); err != nil {
			return err
		}
		r.baselineName, r.gate = f.baseline, &f.gate
	}
	return r.run(ctx, stdout, f.outputs)
}

// resolveTarget applies the precedence flag > environment > script.
func resolveTarget(t engine.Target, f *runFlags, env func(string) (string, bool)) engine.Target {
	pick := func(flag, envName, script string) string {
		if flag != "" {
			return flag
		}
		if v, ok := env(envName); ok && v != "" {
			return v
		}
		return script
	}
	t.BaseURL = pick(f.target, "LLMLOAD_BASE_URL", t.BaseURL)
	t.APIKey = pick(f.apiKey, "LLMLOAD_API_KEY", t.APIKey)
	t.Model = pick(f.model, "LLMLOAD_MODEL", t.Model)
	return t
}

// runner holds one 'llmload run' from target setup to the written result.
type runner struct {
	path       string
	plan       engine.Plan
	script     *luabind.Script
	thresholds threshold.Set
	say        func(format string, a ...any)
	quiet      bool
	stderr     io.Writer

	baseline     *report.Result // compared at the end when set
	baselineName string
	gate         *gateFlags
	gateOpts     compare.Options
}

func (r *runner) run(ctx context.Context, stdout io.Writer, out outputs) error {
	simulated := r.plan.Target.BaseURL == ""
	if simulated {
		srv := sim.New(sim.Config{Seed: r.plan.Seed, APIKey: r.plan.Target.APIKey, Model: r.plan.Target.Model})
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start built-in simulator: %w", err)
		}
		defer srv.Close()
		r.plan.Target.BaseURL = url
		if r.plan.Target.MetricsURL == "" {
			r.plan.Target.MetricsURL = strings.TrimSuffix(url, "/v1") + "/metrics"
		}
		r.say("no target set: running against the built-in simulator at %s (set --target or LLMLOAD_BASE_URL for a real server)", url)
	}
	t := r.plan.Target
	client, err := openai.New(openai.Config{
		BaseURL: t.BaseURL, APIKey: t.APIKey, MaxConns: maxVUs(r.plan) + 4,
		ConnectTimeout: t.ConnectTimeout, TTFTTimeout: t.TTFTTimeout,
		IdleTimeout: t.IdleTimeout, TotalTimeout: t.TotalTimeout,
		Tokenizer: t.Tokenizer, ContinuousUsage: t.ContinuousUsage,
	})
	if err != nil {
		return fmt.Errorf("target base URL (--target, LLMLOAD_BASE_URL or options.target.base_url): %w", err)
	}
	defer client.CloseIdle()
	info, err := client.Preflight(ctx, t.Model)
	if err != nil {
		return fmt.Errorf("preflight failed, no load sent: %w", err)
	}
	r.plan.Target.Model = info.Model
	r.say("target %s, model %s: preflight ok in %v", engine.RedactURL(t.BaseURL), info.Model, info.Latency.Round(time.Millisecond))
	return r.load(ctx, client, simulated, stdout, out)
}

// load runs the plan and writes the results, also when interrupted or
// aborted by a threshold.
func (r *runner) load(ctx context.Context, client engine.Client, simulated bool, stdout io.Writer, out outputs) error {
	col := metrics.NewCollector(metrics.WithSLO(r.plan.SLO))
	if err := col.Declare(r.plan.Metrics...); err != nil {
		return err
	}
	if err := track(col, r.thresholds); err != nil {
		return err
	}
	start := time.Now()
	sink, err := newRecordingSink(col, out, start)
	if err != nil {
		return err
	}
	// Each VU backs off on its own when the target stops answering; the
	// tracker sees every VU's outcomes and records the outages run-wide.
	policy, reach := backoff.DefaultPolicy(), backoff.NewTracker()
	vuRunner := r.script.NewRunner(luabind.RunnerConfig{Client: client, Sink: sink, Model: r.plan.Target.Model,
		Backoff: &policy, Reach: reach})
	eng := executor.New(r.plan, vuRunner, sink)
	meta := report.Meta{
		Scenario: r.path, Target: engine.RedactURL(r.plan.Target.BaseURL), Model: r.plan.Target.Model,
		Simulator: simulated, Start: start, Version: version, Seed: r.plan.Seed,
		SLO: report.SLOFrom(r.plan.SLO), Tokenizer: r.plan.Target.Tokenizer,
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchThresholds(runCtx, cancel, r.thresholds, eng, col)
	mon := selfcheck.Start(selfcheck.DefaultInterval)
	var scraper *servermetrics.Scraper
	if t := r.plan.Target; t.MetricsURL != "" {
		scraper = servermetrics.Start(t.MetricsURL, cmp.Or(t.MetricsEvery, engine.DefaultMetricsEvery), start)
	}
	prog := newProgress(r.stderr, eng, col, r.quiet)
	prog.start()
	runErr := eng.Run(runCtx)
	prog.stop()
	mon.Stop()
	meta.End = time.Now()
	var server *servermetrics.Result
	if scraper != nil {
		server = scraper.Stop()
	}
	meta.Complete = runErr == nil
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		meta.Aborted = "stopped by an error: " + runErr.Error()
	}
	sinkErr := sink.Close()
	summary := col.Close()
	for i := range summary.Stages {
		s := &summary.Stages[i]
		check := mon.Window(s.Start, s.End)
		s.Client = &check
	}
	res := report.New(meta, summary)
	res.ServerMetrics = server
	res.Analysis = analysis.Analyze(res.Stages, r.plan.SLO)
	results, passed := r.thresholds.Evaluate(col.Snapshot())
	var abort *thresholdAbort
	if errors.As(context.Cause(runCtx), &abort) {
		markAborted(results, abort.t.Expr)
		res.Run.Aborted = abort.Error()
	}
	res.Thresholds = results
	reason := verdict.Judge(res, verdict.Input{Outages: reach.Outages(meta.End), Start: start, End: meta.End,
		OnUnreachable: r.script.OnUnreachable()})
	if err := r.write(res, stdout, out); err != nil {
		return err
	}
	if sinkErr != nil {
		return sinkErr
	}
	if err := exitVerdict(runErr, reason, abort, passed); err != nil {
		return err
	}
	if r.baseline != nil {
		fmt.Fprintln(stdout)
		return gate(r.baseline, res, r.baselineName, "this run", r.gateOpts, r.gate, stdout)
	}
	return nil
}

// write prints the summary and writes the result files.
func (r *runner) write(res *report.Result, stdout io.Writer, out outputs) error {
	if err := report.Text(res)(stdout); err != nil {
		return err
	}
	if out.out != "" {
		if err := writeFile(out.out, report.JSON(res)); err != nil {
			return err
		}
		r.say("results written to %s", out.out)
	}
	return writeRenderings(res, out.html, out.stage, r.say)
}

// exitVerdict maps how the run ended to the error main turns into an exit
// code. First come errors (1): the run failed, measured nothing (reason
// starts "nothing measured"), lost its target (reason starts "target
// unreachable"), or was interrupted. Only then the gates (99): a threshold
// that aborted the run or failed; the baseline gate comes after this. A
// gate judged on nothing is no verdict, so nothing measured wins over 99.
func exitVerdict(runErr error, reason string, abort *thresholdAbort, passed bool) error {
	canceled := errors.Is(runErr, context.Canceled)
	// A threshold that aborts the run cancels it too: not an interruption.
	interrupted := canceled && abort == nil
	switch {
	case runErr != nil && !canceled:
		return runErr
	case reason != "" && interrupted:
		return errors.New("run interrupted; " + reason)
	case reason != "":
		return errors.New(reason)
	case abort != nil:
		return &gateError{abort.Error()}
	case interrupted:
		return errors.New("run interrupted: the results above cover what was sent")
	case !passed:
		return &gateError{"some thresholds failed"}
	}
	return nil
}

func markAborted(results []threshold.Result, expr string) {
	for i := range results {
		if results[i].Expr == expr {
			results[i].Aborted = true
		}
	}
}

func maxVUs(p engine.Plan) int {
	n := 0
	for _, s := range p.Scenarios {
		n += s.MaxVUs()
	}
	return n
}

// writeFile writes through a temporary file so a failed write never leaves
// a half-written result behind.
func writeFile(path string, rep report.Reporter) error {
	tmp, err := os.CreateTemp(dirOf(path), ".llmload-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := rep(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }

// checkOutputs fails early, before any load, when an output file could not
// be written at the end of the run, or two outputs would overwrite each other.
func checkOutputs(paths ...string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, _ := filepath.Abs(p)
		if seen[abs] {
			return usagef("run: %s is named by two output flags; each output needs its own file", p)
		}
		seen[abs] = true
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a directory: name a file to write", p)
		}
		if err := checkWritable(p); err != nil {
			return err
		}
	}
	return nil
}

// checkWritable fails early, before any load, when the result file could
// not be written at the end of the run.
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	tmp, err := os.CreateTemp(dirOf(path), ".llmload-*.tmp")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// checkMetricsURL rejects a metrics URL that could never be scraped, before
// any load: a failing scrape during the run is only noted, never fatal.
func checkMetricsURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", engine.RedactURL(raw))
	}
	return nil
}
