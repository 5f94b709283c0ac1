// Package result is the schema of a run's result file and its JSON: what a
// run measured, as written by --out and read back by compare, merge and the
// gates. It renders nothing; engine/report does.
package result

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/localserver"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/servermetrics"
	"github.com/llmload/llmload/engine/threshold"
)

// SchemaVersion is the version of the JSON result format this package
// writes and reads. It changes whenever a field changes meaning or goes away.
const SchemaVersion = 1

// Result is a whole run as it is written to and read from a result file.
type Result struct {
	SchemaVersion int                              `json:"schema_version"`
	Run           Meta                             `json:"run"`
	Stages        []metrics.StageSummary           `json:"stages"`
	ScriptErrors  []metrics.ScriptError            `json:"script_errors"`
	Warmup        metrics.WarmupSummary            `json:"warmup"`
	Checks        []metrics.CheckSummary           `json:"checks"`
	Metrics       map[string]metrics.MetricSummary `json:"metrics"`
	MetricErrors  []metrics.MetricError            `json:"metric_errors"`
	Thresholds    []threshold.Result               `json:"thresholds"`
	// SLOSet says the goodput figures were measured (against Run.SLO);
	// without it they are zero for "not measured", never "none was good".
	SLOSet bool `json:"slo_set"`
	// TimeSeries has one point per second of the run, in order.
	TimeSeries []metrics.Point `json:"time_series"`
	// Warnings say where the results cannot be taken at face value: the
	// generator fell behind its schedule, iterations were dropped, or
	// llmload itself was the bottleneck.
	Warnings []string `json:"warnings"`
	// Lints are the scenario's good-practice findings (engine/lint): the
	// plan's, replaced by the run's own where it had the evidence; absent
	// when none fired and in files from before them.
	Lints []lint.Lint `json:"lints,omitempty"`
	// Robustness totals, by dirty-data kind, how the server answered the
	// deliberately malformed requests (per stage in Stages); absent when
	// none was sent.
	Robustness map[string]metrics.RobustnessSummary `json:"robustness,omitempty"`
	// ServerMetrics is what the target's own metrics endpoint showed
	// during the run; nil when it was not scraped.
	ServerMetrics *servermetrics.Result `json:"server_metrics,omitempty"`
	// GPU is the GPUs' telemetry and the speculative decoding per stage
	// (see GPU); nil when there was neither, nor was any asked for.
	GPU *GPU `json:"gpu,omitempty"`
	// Analysis is the knee and cliff of each load sweep, as found when the
	// run ended; absent from files written before it existed.
	Analysis analysis.Analysis `json:"analysis,omitzero"`
	// Capacity is what each capacity search (executor = "capacity") found,
	// in the plan's order; absent without one.
	Capacity []Capacity `json:"capacity,omitempty"`
	// Traces are what each trace scenario (executor = "trace") replayed,
	// in the plan's order; absent without one.
	Traces []Trace `json:"traces,omitempty"`
	// Pools are how each open-model scenario's VU pool fared, in the
	// plan's order; absent without one, and in merged results.
	Pools []Pool `json:"pools,omitempty"`
	// Cost is the run's estimated spend at options.cost's prices, per
	// stage and in all, and whether its budget stopped the run; absent
	// when the plan set no prices.
	Cost *cost.Summary `json:"cost,omitempty"`
	// Exports are the live exports (--export, --listen, options.export)
	// and how each fared; absent when the run exported nothing.
	Exports []Export `json:"exports,omitempty"`
	// ServerSpans is the account of the server's trace spans the run's
	// receiver took (--otlp-traces-listen); nil without one.
	ServerSpans *ServerSpans `json:"server_spans,omitempty"`
	// NegativeResiduals name the first requests whose server-timed parts
	// exceeded their client TTFT, whatever timed them (spans or
	// timings); absent when none did.
	NegativeResiduals []NegativeResidual `json:"negative_residuals,omitempty"`
	// ServerParts are each stage's queue, prefill and decode by the
	// server's /metrics histograms; absent without them.
	ServerParts []StageServerParts `json:"server_parts,omitempty"`
	// Mergeable is written by segment runs only (--segment), for
	// llmload merge.
	Mergeable *Mergeable `json:"mergeable,omitempty"`
}

// TargetMeta is one endpoint of a run with several targets.
type TargetMeta struct {
	Name   string  `json:"name"`
	URL    string  `json:"url"` // without credentials
	Model  string  `json:"model"`
	Weight float64 `json:"weight"`
}

// Meta describes the run as a whole.
type Meta struct {
	Scenario string `json:"scenario"` // script path as given
	Target   string `json:"target"`   // base URL, without credentials
	Model    string `json:"model"`
	// Targets are the endpoints of options.targets, when the run spread
	// its load across several; Target and Model then list them all.
	Targets   []TargetMeta `json:"targets,omitempty"`
	Simulator bool         `json:"simulator"` // the built-in simulator served the run
	Start     time.Time    `json:"start"`
	End       time.Time    `json:"end"`
	Version   string       `json:"version"`           // llmload's version
	Complete  bool         `json:"complete"`          // false when the run was interrupted
	Aborted   string       `json:"aborted,omitempty"` // why a threshold stopped the run
	Seed      int64        `json:"seed"`
	// RunID is the run_id label of the exported series; "" when the run
	// exported nothing.
	RunID string `json:"run_id,omitempty"`
	// SLO is the service level goodput counts against; nil without one.
	SLO *SLO `json:"slo,omitempty"`
	// Tokenizer is the offline tokenizer that counted tokens beside the
	// server's usage; empty means engine.DefaultTokenizer.
	Tokenizer string `json:"tokenizer,omitempty"`
	// Process is what llmload's own process used while the load ran; nil
	// where the platform does not say.
	Process *Process `json:"process,omitempty"`
	// LocalServer is the target's own processes, when the target listened
	// on llmload's machine; nil for a remote target.
	LocalServer *LocalServer `json:"local_server,omitempty"`
	// Outages are the stretches in which the target answered nothing,
	// with when each began and ended and the failures in it; absent when
	// there were none.
	Outages []backoff.Outage `json:"outages,omitempty"`
	// Verdict is why the run exits 1 although it ran: "nothing measured:
	// ..." or "target unreachable: ..."; empty when it measured. Thresholds
	// and the baseline gate keep their own fields.
	Verdict string `json:"verdict,omitempty"`
	// Gate is why the baseline gate (run --baseline) failed; empty when
	// it passed or did not run.
	Gate string `json:"gate,omitempty"`
	// Plan fingerprints the scenario's source and its plan (scenarios,
	// stages, seed, thresholds; not the target): segment results merge
	// only when it is equal.
	Plan string `json:"plan,omitempty"`
	// PlanParts are the digests Plan is made of (script, seed, each --set
	// key, each data file, the plan's shape), so that merge can name what
	// two segments disagree on; nil in results of older versions.
	PlanParts *plan.Parts `json:"plan_parts,omitempty"`
	// Segment is this run's share of a segmented plan (--segment); nil
	// for a whole run and for a merged result.
	Segment *Segment `json:"segment,omitempty"`
	// Segments are the segment runs a merged result joins, by index; nil
	// for any other result.
	Segments []Segment `json:"segments,omitempty"`
}

// Segment is one segment run of a plan, as its result records it and as
// a merged result lists it.
type Segment struct {
	Index int    `json:"index"` // 0-based
	Count int    `json:"count"`
	Host  string `json:"host,omitempty"`
	// PlannedStart is the --start-at barrier; zero without one.
	PlannedStart time.Time `json:"planned_start,omitzero"`
	// ActualStart is when the segment's load started (after VU init,
	// setup, warmup and the barrier).
	ActualStart time.Time `json:"actual_start,omitzero"`
	// The fields below are filled in by merge, from each segment's result.
	File     string   `json:"file,omitempty"`
	Complete bool     `json:"complete,omitempty"`
	Aborted  string   `json:"aborted,omitempty"`
	Verdict  string   `json:"verdict,omitempty"`
	Process  *Process `json:"process,omitempty"`
	// LocalServer is the segment's, from its result.
	LocalServer *LocalServer `json:"local_server,omitempty"`
}

// Label is "segment i/n".
func (s Segment) Label() string { return fmt.Sprintf("segment %d/%d", s.Index, s.Count) }

// Mergeable is what a segment result carries beyond the summary so that
// llmload merge can rebuild the whole run exactly, thresholds included.
type Mergeable struct {
	// State holds the collector's histograms and cells (metrics.State).
	State *metrics.State `json:"state"`
	// Thresholds and Metrics are the plan's, as written, for evaluating
	// the thresholds again on the merged data.
	Thresholds []ThresholdSpec  `json:"thresholds,omitempty"`
	Metrics    []MetricDef      `json:"metrics,omitempty"`
	Outages    []backoff.Outage `json:"outages,omitempty"`
	// OnUnreachable is the plan's on_unreachable ("" fails).
	OnUnreachable string `json:"on_unreachable,omitempty"`
}

// ThresholdSpec is one entry of options.thresholds (engine.ThresholdSpec).
type ThresholdSpec struct {
	Expr        string   `json:"expr"`
	Conditions  []string `json:"conditions"`
	AbortOnFail bool     `json:"abort_on_fail,omitempty"`
}

// MetricDef is a custom metric the script declared (engine.MetricDef).
type MetricDef struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// MergeableFrom keeps a plan's thresholds and metrics beside state.
func MergeableFrom(p plan.Plan, state *metrics.State, outages []backoff.Outage, onUnreachable string) *Mergeable {
	m := &Mergeable{State: state, Outages: outages, OnUnreachable: onUnreachable}
	for _, t := range p.Thresholds {
		m.Thresholds = append(m.Thresholds, ThresholdSpec{Expr: t.Expr, Conditions: t.Conditions, AbortOnFail: t.AbortOnFail})
	}
	for _, d := range p.Metrics {
		m.Metrics = append(m.Metrics, MetricDef{Name: d.Name, Kind: d.Kind})
	}
	return m
}

// Plan is the part of a plan that thresholds are parsed against: the
// thresholds, the custom metrics and every stage of the merged result.
func (m *Mergeable) Plan(script string, stages []metrics.StageSummary) plan.Plan {
	p := plan.Plan{Script: script}
	for _, t := range m.Thresholds {
		p.Thresholds = append(p.Thresholds, plan.ThresholdSpec{Expr: t.Expr, Conditions: t.Conditions, AbortOnFail: t.AbortOnFail})
	}
	for _, d := range m.Metrics {
		p.Metrics = append(p.Metrics, plan.MetricDef{Name: d.Name, Kind: d.Kind})
	}
	idx := map[string]int{}
	for _, s := range stages {
		i, ok := idx[s.Scenario]
		if !ok {
			i = len(p.Scenarios)
			idx[s.Scenario] = i
			p.Scenarios = append(p.Scenarios, plan.Scenario{Name: s.Scenario})
		}
		p.Scenarios[i].Stages = append(p.Scenarios[i].Stages, plan.Stage{Name: s.Stage})
	}
	return p
}

// Process is the CPU, memory and garbage collection of llmload's process
// over the load (from its first VU to its last request): the cost of
// measuring, which `llmload report --truth` reads per streamed token.
type Process struct {
	CPUUserS   float64 `json:"cpu_user_s"`
	CPUSystemS float64 `json:"cpu_system_s"`
	MaxRSSMB   float64 `json:"max_rss_mb"` // the process's peak resident set, also before the load
	GCCycles   uint32  `json:"gc_cycles"`
	GCPauseMS  float64 `json:"gc_pause_ms"` // total stop-the-world time
	// WithSimulator says the built-in simulator ran in the same process,
	// so its cost is in these figures too.
	WithSimulator bool `json:"with_simulator,omitempty"`
	// Held is what the process held over the load, at most MaxHeldPoints
	// points evenly spread; Drift judges it when the stages ran a minute
	// or more.
	Held  []HeldPoint `json:"held,omitempty"`
	Drift *Drift      `json:"drift,omitempty"`
}

// MaxHeldPoints bounds Process.Held, so a day's soak keeps a small file.
const MaxHeldPoints = 600

// HeldPoint is what llmload's process held at one moment; -1 where the
// platform does not say.
type HeldPoint struct {
	T          float64 `json:"t_s"` // seconds from the run's start
	RSSMB      float64 `json:"rss_mb"`
	HeapLiveMB float64 `json:"heap_live_mb"`
	Goroutines int64   `json:"goroutines"`
	OpenFiles  int64   `json:"open_files"`
}

// Drift is whether llmload's own process grew over a long load (a soak):
// each figure's level early and late in the stages' span after a
// warm-up, medians of the samples in its first and its last third.
type Drift struct {
	FromS      float64      `json:"from_s"` // the warm-up's end, seconds from the run's start
	ToS        float64      `json:"to_s"`
	RSSMB      *DriftFigure `json:"rss_mb,omitempty"`
	HeapLiveMB *DriftFigure `json:"heap_live_mb,omitempty"`
	Goroutines *DriftFigure `json:"goroutines,omitempty"`
	OpenFiles  *DriftFigure `json:"open_files,omitempty"`
}

// DriftFigure is one figure's early and late level; Growing when it grew
// by more than 10% and more than its noise floor.
type DriftFigure struct {
	Early         float64 `json:"early"`
	Late          float64 `json:"late"`
	ChangePercent float64 `json:"change_percent"`
	Growing       bool    `json:"growing"`
}

// DriftFigures is each figure of d with its name and unit ("" for a
// count), in the order they are shown; an unmeasured one is nil.
func (d *Drift) DriftFigures() []NamedDriftFigure {
	return []NamedDriftFigure{{"RSS", " MB", d.RSSMB}, {"live heap", " MB", d.HeapLiveMB},
		{"goroutines", "", d.Goroutines}, {"open files", "", d.OpenFiles}}
}

// NamedDriftFigure is a DriftFigure with its name and unit.
type NamedDriftFigure struct {
	Name, Unit string
	*DriftFigure
}

// Growing names the figures that grew.
func (d *Drift) Growing() []string {
	var names []string
	for _, f := range d.DriftFigures() {
		if f.DriftFigure != nil && f.Growing {
			names = append(names, f.Name)
		}
	}
	return names
}

// CPUS is the process's user plus system CPU time in seconds.
func (p *Process) CPUS() float64 { return p.CPUUserS + p.CPUSystemS }

// LocalServer is what llmload found of a target on its own machine, once
// at the start of the run: the processes holding the target's listening
// socket and their descendants, whose CPU each stage's self-check counts
// apart (engine.ServerCPU). Behind a local proxy they are the proxy's.
type LocalServer struct {
	// Processes are by pid and executable name; never their command
	// lines, which may hold an API key. None when Note says why.
	Processes []ServerProcess `json:"processes,omitempty"`
	// Note says why no process was found for a target on this machine.
	Note string `json:"note,omitempty"`
}

// ServerProcess is one process of a local server.
type ServerProcess struct {
	PID  int    `json:"pid"`
	Name string `json:"name"`
}

// LocalServerFrom records the processes found, or why none was; nil when
// there is nothing to say (a remote target).
func LocalServerFrom(procs []localserver.Process, note string) *LocalServer {
	if len(procs) == 0 && note == "" {
		return nil
	}
	l := &LocalServer{Note: note}
	for _, p := range procs {
		l.Processes = append(l.Processes, ServerProcess{PID: p.PID, Name: p.Name})
	}
	return l
}

// Name is the processes as a report names them: "llama-server pid 1234";
// "" when none was found.
func (l *LocalServer) Name() string {
	if l == nil {
		return ""
	}
	procs := make([]localserver.Process, len(l.Processes))
	for i, p := range l.Processes {
		procs[i] = localserver.Process{PID: p.PID, Name: p.Name}
	}
	return localserver.Describe(procs)
}

// SLO is the service level a request had to meet to count toward goodput,
// and a task toward the goodput of tasks (TaskMS), in milliseconds; zero
// fields were not checked.
type SLO struct {
	TTFTMS float64 `json:"ttft_ms,omitempty"`
	TPOTMS float64 `json:"tpot_ms,omitempty"`
	E2EMS  float64 `json:"e2e_ms,omitempty"`
	TaskMS float64 `json:"task_ms,omitempty"`
}

// SLOFrom converts a plan's SLO for Meta; nil when no objective is set.
func SLOFrom(o plan.SLO) *SLO {
	if o.IsZero() {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return &SLO{TTFTMS: ms(o.TTFT), TPOTMS: ms(o.TPOT), E2EMS: ms(o.E2E), TaskMS: ms(o.Task)}
}

// New builds a Result from a run's metadata and summary; s may be nil for
// a run that measured nothing. The target is redacted again here, because a
// leaked credential in a result file is worse than a redundant check.
// Times are converted to UTC, which also drops monotonic clock readings, so
// that a Result equals what ReadJSON later reads back.
func New(meta Meta, s *metrics.Summary) *Result {
	meta.Target = redact.URL(meta.Target)
	meta.Targets = slices.Clone(meta.Targets)
	for i := range meta.Targets {
		meta.Targets[i].URL = redact.URL(meta.Targets[i].URL)
	}
	meta.Start, meta.End = meta.Start.UTC(), meta.End.UTC()
	r := &Result{
		SchemaVersion: SchemaVersion,
		Run:           meta,
		Stages:        []metrics.StageSummary{},
		ScriptErrors:  []metrics.ScriptError{},
		Checks:        []metrics.CheckSummary{},
		Metrics:       map[string]metrics.MetricSummary{},
		MetricErrors:  []metrics.MetricError{},
		Thresholds:    []threshold.Result{},
		TimeSeries:    []metrics.Point{},
	}
	if s != nil {
		r.Stages = append(r.Stages, s.Stages...)
		// Scenarios start together and their stages in any order: list them
		// by scenario name, then in each scenario's own order, as the plan does.
		slices.SortStableFunc(r.Stages, func(a, b metrics.StageSummary) int {
			return cmp.Or(strings.Compare(a.Scenario, b.Scenario), a.Index-b.Index)
		})
		for i := range r.Stages {
			r.Stages[i].Start, r.Stages[i].End = r.Stages[i].Start.UTC(), r.Stages[i].End.UTC()
		}
		r.ScriptErrors = append(r.ScriptErrors, s.ScriptErrors...)
		r.Warmup = s.Warmup
		r.Checks = append(r.Checks, s.Checks...)
		maps.Copy(r.Metrics, s.Metrics)
		r.MetricErrors = append(r.MetricErrors, s.MetricErrors...)
		r.SLOSet = s.SLOSet
		r.TimeSeries = append(r.TimeSeries, s.TimeSeries...)
		r.Robustness = maps.Clone(s.Robustness)
	}
	r.Warnings = warnings(r.Stages)
	return r
}

// ForTarget is r as one of its targets saw it: every stage that target
// served, narrowed to its requests (metrics.StageSummary.ForTarget), so
// that two targets of one run compare as two runs do. The run-level
// tables (checks, thresholds, server metrics) are left out: they are the
// whole run's. Errors: the run has no target of that name.
func (r *Result) ForTarget(name string) (*Result, error) {
	names := make([]string, len(r.Run.Targets))
	found := false
	for i, t := range r.Run.Targets {
		names[i] = t.Name
		found = found || t.Name == name
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("target %q: the run had one target (no options.targets)", name)
	}
	if !found {
		return nil, fmt.Errorf("no target named %q in the run (targets: %s)", name, strings.Join(names, ", "))
	}
	out := &Result{SchemaVersion: r.SchemaVersion, Run: r.Run, SLOSet: r.SLOSet}
	out.Run.Target, out.Run.Targets = name, nil
	for i := range r.Stages {
		if v, ok := r.Stages[i].ForTarget(name); ok {
			out.Stages = append(out.Stages, v)
		}
	}
	return out, nil
}
