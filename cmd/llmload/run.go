package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/barrier"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	enginerun "github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/luabind"
	"github.com/llmload/llmload/luabind/api"
)

const runUsage = `Usage: llmload run [flags] SCENARIO.lua

Runs the scenario and prints per-stage percentiles. With no target set (no
--target, no LLMLOAD_BASE_URL, no options.target.base_url) it runs against the
built-in simulator on 127.0.0.1.

Target precedence: flag, then environment (LLMLOAD_BASE_URL, LLMLOAD_API_KEY,
LLMLOAD_MODEL), then options.target in the script.

Before any load it prints the scenario's lints (good-practice checks, docs/scenarios.md
"Good practice, checked"), judged from the plan and a dry run of its
iterations; the summary lists them again, judged from what the run saw.
With --strict a lint warning exits 1: the plan's before any load, the run's
at its end (exit 1 then outranks a failed threshold's 99).

Flags:
`

// runFlags are the parsed flags of 'llmload run'.
type runFlags struct {
	target, model, apiKey string
	out                   enginerun.Outputs
	quiet                 bool
	cpuProfile            string
	heapProfile           string
	sets                  []string
	maxMemory             string
	seed                  int64
	baseline              string
	gate                  gateFlags
	segment               plan.Segment
	startAt               time.Time
	barrier               string
	barrierTimeout        time.Duration
	strict                bool
	export                exportFlags
	reach                 targetFlags
	metricsURLs           []string
	spans                 enginerun.Spans
	gpu                   gpuFlags
	history               historyFlags
	historyBase           history.BaselineSpec // Runs > 0: --baseline history:…
	baselineLabels        []string
	baselineFilter        map[string]string
	noBaseline            string
}

// maxMemoryFlag registers --max-memory, shared by run and check.
func maxMemoryFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "max-memory", "", "stop when llmload's memory crosses this, e.g. 512MB or 2GB; 0 for no bound\n(default: half of the machine's memory, or of its cgroup's limit when smaller;\nan eighth of ulimit -v or -d when that is smaller still)")
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, string, error) {
	var f runFlags
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, runUsage+fs.FlagUsages()) }
	fs.StringVar(&f.target, "target", "", "base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1")
	fs.StringVar(&f.model, "model", "", "model name (default: the script's, else the server's first model)")
	fs.StringVar(&f.apiKey, "api-key", "", "API key (prefer LLMLOAD_API_KEY: flags show in process lists)")
	f.reach.register(fs)
	fs.StringVar(&f.out.Out, "out", "", "write the results as JSON to this file")
	fs.StringVar(&f.out.CSV, "csv", "", "write one CSV row per request to this file, as the run goes")
	fs.StringVar(&f.out.JSONL, "requests-jsonl", "", "write one JSON line per request to this file, as the run goes")
	fs.StringVar(&f.out.HTML, "html", "", "write a self-contained HTML report to this file")
	fs.StringVar(&f.out.Stages, "csv-stages", "", "write one CSV row per stage to this file")
	fs.StringVar(&f.baseline, "baseline", "", "compare the results with this earlier result file, or with the history (--history):\n"+
		"history:last, or history:median:N (the last N runs of this plan pooled); exit 99 on a regression")
	f.history.register(fs, "store the run")
	fs.StringArrayVar(&f.baselineLabels, "baseline-label", nil, "with --baseline history:…: pool only runs with this label, key=value (repeatable), e.g. branch=main")
	fs.StringVar(&f.noBaseline, "no-baseline", "pass", "with --baseline history:…, when the history holds no run of this plan yet:\npass (store this run, note it, exit 0) or fail (exit 1 before the load)")
	// The gate flags go through a set of their own, so that every flag
	// gateFlags registers, now or later, is known to need --baseline.
	gfs := pflag.NewFlagSet("gate", pflag.ContinueOnError)
	f.gate.register(gfs)
	fs.AddFlagSet(gfs)
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print only the final summary")
	fs.BoolVar(&f.strict, "strict", false, strictUsage)
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write a CPU profile of llmload itself to this file (go tool pprof reads it)")
	fs.StringVar(&f.heapProfile, "heap-profile", "", "write a heap profile of llmload itself to this file as the load ends (go tool pprof reads it)")
	fs.StringArrayVar(&f.metricsURLs, "metrics-url", nil, "the server's Prometheus endpoint, read during the run (instead of options.target.metrics_url);\n"+
		"repeat it for each replica: each is kept apart, their queues and token rates summed\n"+
		"(default: the target's /metrics when it is vLLM's, SGLang's, TGI's or llama.cpp's)")
	fs.StringVar(&f.spans.Listen, "otlp-traces-listen", "", "receive the server's OTLP trace spans here (HTTP and gRPC, e.g. 127.0.0.1:4317)\nand split each request's TTFT into queue, prefill and the rest; point the server's\n--otlp-traces-endpoint at it")
	fs.DurationVar(&f.spans.Wait, "otlp-traces-wait", 10*time.Second, "with --otlp-traces-listen: how long a request waits for its span")
	f.gpu.register(fs)
	fs.StringArrayVar(&f.sets, "set", nil, "set a script parameter, key=value (read with llm.param); repeatable")
	fs.Int64Var(&f.seed, "seed", 0, "run seed for reproducible randomness (0: from the clock)")
	maxMemoryFlag(fs, &f.maxMemory)
	f.export.register(fs)
	segment := fs.String("segment", "", "run only the i-th (0-based) of n disjoint shares of the plan, e.g. 0/4;\njoin the n results with llmload merge")
	startAt := fs.String("start-at", "", "hold the load until this wall-clock time (RFC 3339, or +30s from now),\nso that segments on several machines start together")
	fs.StringVar(&f.barrier, "barrier", "", "with --segment: start the load once every segment is ready, through this shared directory\n(each writes DIR/ready-i; all start 2s after the last one; instead of --start-at)")
	fs.DurationVar(&f.barrierTimeout, "barrier-timeout", barrier.DefaultTimeout, "with --barrier: give up when not every segment is ready this long after this one")
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
	if err := f.parseHistory(fs.Changed("no-baseline"), os.Getenv); err != nil {
		return nil, "", err
	}
	if err := f.export.parse(); err != nil {
		return nil, "", err
	}
	if err := f.reach.parse("run"); err != nil {
		return nil, "", err
	}
	if err := checkMetricsFlags(f.metricsURLs); err != nil {
		return nil, "", err
	}
	if err := checkSpansFlags(f.spans, fs.Changed("otlp-traces-wait")); err != nil {
		return nil, "", err
	}
	if err := f.gpu.check(); err != nil {
		return nil, "", err
	}
	if err := f.parseSegment(*segment, *startAt, time.Now()); err != nil {
		return nil, "", err
	}
	if err := f.checkBarrier(fs.Changed("barrier-timeout")); err != nil {
		return nil, "", err
	}
	return &f, fs.Arg(0), nil
}

// maxStartAhead bounds how far ahead --start-at may be.
const maxStartAhead = 24 * time.Hour

// parseSegment reads --segment and --start-at. A segment is only a share
// of the load, so a baseline gate on it would judge the wrong figures: the
// merged result is what compares.
func (f *runFlags) parseSegment(segment, startAt string, now time.Time) error {
	var err error
	if segment != "" {
		if f.segment, err = plan.ParseSegment(segment); err != nil {
			return usagef("run: --segment %v", err)
		}
		if !f.segment.Whole() && f.baseline != "" {
			return usagef("run: --baseline judges a whole run, not one segment: compare the merged result (llmload merge ... --out ALL.json, then llmload compare BASE.json ALL.json)")
		}
		if !f.segment.Whole() && f.history.dsn != "" {
			if !f.history.fromEnv || len(f.history.labels) > 0 {
				return usagef("run: --history stores whole runs, not one segment: store the merged result (llmload merge ... --history DSN)")
			}
			// A CI that sets LLMLOAD_HISTORY for every job runs its
			// segments under it too: the merge stores the run.
			f.history.dsn = ""
		}
	}
	if startAt != "" {
		if f.startAt, err = plan.ParseStartAt(startAt, now); err != nil {
			return usagef("run: --start-at %v", err)
		}
		if ahead := f.startAt.Sub(now); ahead > maxStartAhead {
			return usagef("run: --start-at %s is %v away, more than %v: a mistyped date would hold the run that long",
				startAt, ahead.Round(time.Minute), maxStartAhead)
		}
	}
	return nil
}

// checkBarrier refuses --barrier where it cannot work: it joins segments,
// and it decides the start, which --start-at would decide too.
func (f *runFlags) checkBarrier(timeoutSet bool) error {
	switch {
	case f.barrier == "" && timeoutSet:
		return usagef("run: --barrier-timeout has no effect without --barrier DIR")
	case f.barrier == "":
		return nil
	case f.segment.Count == 0:
		return usagef("run: --barrier starts the segments of a plan together: give this run's --segment i/n too")
	case !f.startAt.IsZero():
		return usagef("run: --barrier and --start-at both decide when the load starts: give one")
	case f.barrierTimeout <= 0:
		return usagef("run: --barrier-timeout %v must be positive", f.barrierTimeout)
	}
	return nil
}

// needSeed refuses a segment of several without a chosen seed: each
// segment would draw its own from the clock, and their results, which
// must be shares of one seeded schedule, could not be merged.
func needSeed(seg plan.Segment, script *luabind.Script) error {
	if seg.Whole() || !script.SeedDerived() {
		return nil
	}
	return usagef("run: --segment %s needs a seed that every segment shares (without one, each draws its own from the clock and the results cannot be merged): pass one --seed to all %d segments, e.g. --seed %d (picked now), or set options.seed in the script",
		seg, seg.Count, script.Plan().Seed)
}

// planParts are the digests of what makes the plan (plan.Parts), with
// the script's data files read again for theirs.
func planParts(p plan.Plan, script *luabind.Script, path string, params map[string]string) (plan.Parts, error) {
	data, err := plan.DigestFiles(filepath.Dir(path), script.Files())
	if err != nil {
		return plan.Parts{}, fmt.Errorf("%s: %w", path, err)
	}
	return p.Parts(script.Source(), params, data), nil
}

// startBarrier is the start gate --barrier names, nil without one.
func (f *runFlags) startBarrier(parts plan.Parts, say func(string, ...any)) executor.StartGate {
	if f.barrier == "" {
		return nil
	}
	host, _ := os.Hostname()
	cfg := barrier.Config{Dir: f.barrier, Index: f.segment.Index, Count: f.segment.Count,
		Fingerprint: parts.Fingerprint(), Parts: &parts, Host: host, Timeout: f.barrierTimeout, Log: say}
	return func(ctx context.Context) (time.Time, error) { return barrier.Wait(ctx, cfg) }
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

func runCmd(args []string, stdout, stderr io.Writer) error {
	f, path, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	params, err := parseSets(f.sets)
	if err != nil {
		return err
	}
	if err := checkOutputs(f.out.Out, f.out.CSV, f.out.JSONL, f.out.HTML, f.out.Stages); err != nil {
		return err
	}
	mem, err := watchMemory(f.maxMemory)
	if err != nil {
		return err
	}
	defer mem.Stop()
	defer memlimit.TuneGC(mem.Limit() / 10 * 9)()
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var writeHeap func()
	if f.heapProfile != "" {
		if writeHeap, err = heapProfileAtEnd(f.heapProfile); err != nil {
			return err
		}
	}
	// --seed wins over options.seed; with neither, Compile picks one from
	// the clock and reports it in the plan.
	// The memory bound's context cuts the script's top level too: at
	// Compile, in each new VU and in setup.
	script, err := luabind.Compile(path, luabind.Options{Params: params, Seed: f.seed, Stop: mem.Context()})
	if err != nil {
		return enginerun.MemoryError(mem, err)
	}
	if err := needSeed(f.segment, script); err != nil {
		return err
	}
	plan := script.Plan()
	parts, err := planParts(plan, script, path, params)
	if err != nil {
		return err
	}
	if err := resolveTargets(&plan, f, os.LookupEnv); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.reach.applyPlan("run", &plan); err != nil {
		return err
	}
	plan.Segment, plan.StartAt = f.segment, f.startAt
	f.export.apply(&plan.Export)
	if err := checkPlanMetricsURLs(plan); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	set, err := enginerun.ParseThresholds(plan)
	if err != nil {
		return err
	}
	say := func(format string, a ...any) {
		if !f.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	hist, err := f.history.open()
	if err != nil {
		return err
	}
	if hist != nil {
		defer hist.Close()
	}
	cfg := enginerun.Config{
		Plan: plan, Thresholds: set, OnUnreachable: script.OnUnreachable(),
		NewRunner: func(d enginerun.RunnerDeps) engine.Runner {
			return script.NewRunner(api.RunnerConfig{Client: d.Client, Sink: d.Sink, Model: d.Model,
				Backoff: d.Policy, Reach: d.Reach, Stop: d.Stop, Observe: d.Observe})
		},
		Outputs: f.out, Spans: f.spans,
		Summary: stdout, Log: say, Memory: mem, Version: version, GPU: f.gpu.options(),
		Fingerprint: parts.Fingerprint(), PlanParts: &parts, Traces: script.Traces(),
		Barrier: f.startBarrier(parts, say),
		Progress: func(l enginerun.Live) func() {
			p := newProgress(stderr, l, f.quiet)
			p.start()
			return p.stop
		},
	}
	switch {
	case f.historyBase.Runs > 0:
		if cfg.Gate, err = f.historyGate(hist, parts, plan.Target.Model, stdout); err != nil {
			return err
		}
	case f.baseline != "":
		if cfg.Gate, err = baselineGate(f, stdout); err != nil {
			return err
		}
	}
	if cfg.Lints, err = runLints(script, plan, set, f, stderr); err != nil {
		return err
	}
	ctx, abort, stop := notifySignals(stderr, f.quiet)
	defer stop()
	cfg.Abort, cfg.LoadEnded = abort, writeHeap
	res, out, err := enginerun.Run(ctx, cfg)
	if hist != nil && res != nil {
		verdict, reason := verdictOf(out, err)
		e := history.Entry{Result: res, Labels: history.Labels(os.Getenv, f.history.parsed), Verdict: verdict, Reason: reason, Source: "run"}
		if serr := store(hist, e, f.out.Out, stderr); serr != nil {
			if err == nil && out.Verdict == enginerun.Passed {
				return serr
			}
			// The run's own verdict decides the exit code; the store's
			// failure is still told.
			fmt.Fprintf(stderr, "llmload: %v\n", serr)
		}
	}
	return outcomeError(out, err)
}

// outcomeError is the error main turns into the run's exit code.
func outcomeError(out enginerun.Outcome, err error) error {
	switch {
	case err != nil:
		return err
	case out.Verdict == enginerun.GateFailed:
		return &gateError{out.Reason}
	case out.Verdict == enginerun.Failed:
		return errors.New(out.Reason)
	}
	return nil
}

// baselineGate reads --baseline and returns the gate that compares the
// run with it, printed after the run's summary.
func baselineGate(f *runFlags, stdout io.Writer) (enginerun.Gate, error) {
	opts, err := f.gate.options()
	if err != nil {
		return nil, err
	}
	base, err := readResult(f.baseline)
	if err != nil {
		return nil, err
	}
	return func(res *result.Result) (string, error) {
		fmt.Fprintln(stdout)
		err := gate(base, res, f.baseline, "this run", opts, &f.gate, stdout)
		var ge *gateError
		if errors.As(err, &ge) {
			return ge.msg, nil
		}
		return "", err
	}, nil
}

// watchMemory starts the memory bound --max-memory names ("" the default,
// "0" none).
func watchMemory(flag string) (*memlimit.Watcher, error) {
	limit := memlimit.Default()
	if flag != "" {
		var err error
		if limit, err = memlimit.ParseSize(flag); err != nil {
			return nil, usagef("--max-memory: %v", err)
		}
	}
	return memlimit.Start(limit, memlimit.Options{}), nil
}

// resolveTargets applies the target flags and environment to the plan's
// target, or the flags alone to each of options.targets: --target cannot
// choose among several targets, so it is refused there, and the
// LLMLOAD_* variables, which a CI may set for every scenario, would
// overwrite what each target's own entry says.
func resolveTargets(p *plan.Plan, f *runFlags, env func(string) (string, bool)) error {
	if len(p.Targets) == 0 {
		p.Target = resolveTarget(p.Target, f, env)
		return nil
	}
	if f.target != "" {
		return usagef("--target: the scenario names several targets (options.targets %s); set each one's base_url in the script, e.g. from llm.env",
			strings.Join(plan.TargetNames(p.Targets), ", "))
	}
	noEnv := func(string) (string, bool) { return "", false }
	for i := range p.Targets {
		p.Targets[i] = resolveTarget(p.Targets[i], f, noEnv)
	}
	return nil
}

// resolveTarget applies the precedence flag > environment > script.
func resolveTarget(t plan.Target, f *runFlags, env func(string) (string, bool)) plan.Target {
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
	if len(f.metricsURLs) > 0 {
		t.MetricsURL, t.MetricsURLs = f.metricsURLs[0], slices.Clone(f.metricsURLs[1:])
	}
	return t
}

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
	tmp, err := os.CreateTemp(filepath.Dir(path), ".llmload-*.tmp")
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
		return fmt.Errorf("%q is not an http(s) URL", redact.URL(raw))
	}
	return nil
}

// checkMetricsFlags rejects a --metrics-url that could never be scraped,
// or one given twice, as a usage error.
func checkMetricsFlags(urls []string) error {
	for i, u := range urls {
		if err := checkMetricsURL(u); err != nil || u == "" {
			return usagef("run: --metrics-url %q is not an http(s) URL", redact.URL(u))
		}
		if slices.Contains(urls[:i], u) {
			return usagef("run: --metrics-url %s is given twice", redact.URL(u))
		}
	}
	return nil
}

// checkPlanMetricsURLs rejects a script's metrics URL that could never
// be scraped, naming the option it came from.
func checkPlanMetricsURLs(p plan.Plan) error {
	check := func(option string, t plan.Target) error {
		for _, u := range append([]string{t.MetricsURL}, t.MetricsURLs...) {
			if err := checkMetricsURL(u); err != nil {
				return fmt.Errorf("%s: %w", option, err)
			}
		}
		return nil
	}
	if err := check("options.target.metrics_url", p.Target); err != nil {
		return err
	}
	for _, t := range p.Targets {
		if err := check("options.targets."+t.Name+".metrics_url", t); err != nil {
			return err
		}
	}
	return nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// heapProfileAtEnd creates path now, so a path that cannot be written
// fails before the load, and returns what writes the heap's profile into
// it as the load ends: what is live, where it was allocated.
func heapProfileAtEnd(path string) (write func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--heap-profile: %w", err)
	}
	return func() {
		runtime.GC()
		err := pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "llmload: --heap-profile %s: %v\n", path, err)
		}
	}, nil
}

// checkSpansFlags rejects a trace receiver address that could never be
// listened on, and a wait without a receiver or out of bounds, before
// anything runs.
func checkSpansFlags(s enginerun.Spans, waitSet bool) error {
	if s.Listen == "" {
		if waitSet {
			return usagef("run: --otlp-traces-wait needs --otlp-traces-listen")
		}
		return nil
	}
	if _, port, err := net.SplitHostPort(s.Listen); err != nil || port == "" {
		return usagef("run: --otlp-traces-listen %q: want host:port, e.g. 127.0.0.1:4317 (port 0 picks a free one)", s.Listen)
	}
	if s.Wait <= 0 || s.Wait > 10*time.Minute {
		return usagef("run: --otlp-traces-wait %v: want more than 0 and at most 10m", s.Wait)
	}
	return nil
}
