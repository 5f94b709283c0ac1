package run

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/export"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// exporting is the live export of a run (engine/export), nil when the
// plan exports nothing; its methods do nothing then.
type exporting struct {
	x     *export.Exporter
	runID string
	eng   *executor.Engine // set before start; read by the load gauges
}

// newExporting makes the exporter of c.Plan.Export, binding --listen's
// address before any load.
func (c *Config) newExporting(start time.Time) (*exporting, error) {
	e := c.Plan.Export
	if !e.Enabled() {
		return nil, nil
	}
	open := map[string]bool{}
	for _, sc := range c.Plan.Scenarios {
		open[sc.Name] = plan.OpenModel(sc.Executor)
	}
	ex := &exporting{runID: c.runID(start)}
	x, err := export.New(export.Config{Export: e, RunID: ex.runID, Start: start, Open: open, Log: c.log,
		Version: c.Version, Load: ex.load})
	if err != nil {
		return nil, err
	}
	ex.x = x
	if addr := x.ListenAddr(); addr != "" {
		c.log("--listen: serving the run's live metrics at http://%s%s", addr, export.MetricsPath)
	}
	return ex, nil
}

// runID is options.export.run_id, or the script's name and the start
// time: unique per run, readable in a dashboard's run picker. A segment's
// carries its share, so segments never write the same series.
func (c *Config) runID(start time.Time) string {
	id := c.Plan.Export.RunID
	if id == "" {
		name := strings.TrimSuffix(filepath.Base(c.Plan.Script), filepath.Ext(c.Plan.Script))
		id = name + "-" + start.UTC().Format("20060102T150405Z")
	}
	if seg := c.Plan.Segment; !seg.Whole() {
		id += fmt.Sprintf("-seg%dof%d", seg.Index, seg.Count)
	}
	return id
}

// sink is s with the exporter observing every event after it.
func (ex *exporting) sink(s engine.Sink) engine.Sink {
	if ex == nil {
		return s
	}
	return tee{s, ex.x}
}

// start starts the pushes once the executor exists.
func (ex *exporting) start(eng *executor.Engine) {
	if ex == nil {
		return
	}
	ex.eng = eng
	ex.x.Start()
}

// load is each scenario's busy VUs (its iterations in flight) and active
// VUs, from the executor's status.
func (ex *exporting) load() []export.Load {
	if ex.eng == nil {
		return nil
	}
	st := ex.eng.Status()
	out := make([]export.Load, len(st.Scenarios))
	for i, s := range st.Scenarios {
		out[i] = export.Load{Scenario: s.Name, InFlight: s.BusyVUs, ActiveVUs: s.ActiveVUs}
	}
	return out
}

// close ends the export with the final counts in place; after a second
// interrupt only a short final push is tried, since the process exits.
func (ex *exporting) close(aborted bool) {
	if ex == nil {
		return
	}
	if aborted {
		ex.x.Abort()
		return
	}
	ex.x.Close()
}

// record puts the exports' health and warnings in res.
func (ex *exporting) record(res *result.Result) {
	if ex == nil || res == nil {
		return
	}
	res.Run.RunID = ex.runID
	health := ex.x.Close()
	exports := make([]result.Export, len(health))
	for i, h := range health {
		exports[i] = result.Export{Kind: h.Kind, Target: h.Target, Pushes: h.Pushes, Scrapes: h.Scrapes,
			Failures: h.Failures, LastError: h.LastError}
	}
	res.AddExports(exports, ex.x.Warnings())
}

// tee passes each event to its sinks in order: the run's sink first, then
// the exporter, which only touches memory. engine.Sink has a method per
// event, so each method only names its event and fan does the rest: no
// event can be forwarded differently from the others.
type tee []engine.Sink

// fan sends v to every sink of t, in order, through send: a method
// expression of engine.Sink, which costs no allocation.
func fan[T any](t tee, send func(engine.Sink, T), v T) {
	for _, s := range t {
		send(s, v)
	}
}

func (t tee) Sample(x engine.Sample)                  { fan(t, engine.Sink.Sample, x) }
func (t tee) IterationError(e engine.IterationError)  { fan(t, engine.Sink.IterationError, e) }
func (t tee) StageStarted(m engine.StageMark)         { fan(t, engine.Sink.StageStarted, m) }
func (t tee) StageEnded(m engine.StageMark)           { fan(t, engine.Sink.StageEnded, m) }
func (t tee) IterationStarted(m engine.IterationMark) { fan(t, engine.Sink.IterationStarted, m) }
func (t tee) Dropped(m engine.DropMark)               { fan(t, engine.Sink.Dropped, m) }
func (t tee) Metric(m engine.MetricSample)            { fan(t, engine.Sink.Metric, m) }
func (t tee) Task(x engine.TaskSample)                { fan(t, engine.Sink.Task, x) }
