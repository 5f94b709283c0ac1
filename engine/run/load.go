package run

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/cost"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/memlimit"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/runclock"
	"github.com/llmload/llmload/engine/selfcheck"
	"github.com/llmload/llmload/engine/servermetrics"
)

// ErrAborted is the run's cancel cause when Config.Abort closes.
var ErrAborted = errors.New("second interrupt: exited without waiting for in-flight requests, setup or teardown")

// ending is how the executor's part of a run ended.
type ending struct {
	err     error                   // Engine.Run's error; nil when complete
	cause   error                   // the run context's cause
	aborted bool                    // Config.Abort closed before Engine.Run returned
	memory  *memlimit.ExceededError // the memory bound stopped the run
	line    string                  // "file:line" running when it did, if known
	// capacity is what the capacity searches found, once Engine.Run has
	// returned (so far, after an abort).
	capacity []capacity.Outcome
	// pools are how the open-model scenarios' VU pools fared.
	pools []result.Pool
	// spend is the estimated spend of a priced run, once Engine.Run has
	// returned (so far, after an abort); nil without prices.
	spend *cost.Summary
}

// load runs the plan against c.Client and builds, writes and judges the
// result, also when interrupted or aborted.
func (c *Config) load(ctx context.Context, simulated bool) (*result.Result, Outcome, error) {
	endpoints, err := c.metricsEndpoints(ctx)
	if err != nil {
		return nil, Outcome{}, err
	}
	col := metrics.NewCollector(metrics.WithSLO(c.Plan.SLO))
	// Every return closes the aggregator's goroutine; after the normal
	// Close below this one does nothing.
	defer col.Close()
	if err := col.Declare(c.Plan.Metrics...); err != nil {
		return nil, Outcome{}, err
	}
	if err := track(col, c.Thresholds); err != nil {
		return nil, Outcome{}, err
	}
	probes, err := capacity.NewWindowJudge(c.Plan, col, nil)
	if err != nil {
		return nil, Outcome{}, err
	}
	start := runclock.Now()
	sink, err := newRecordingSink(col, c.Outputs, start)
	if err != nil {
		return nil, Outcome{}, err
	}
	spans, err := c.startSpans(sink)
	if err != nil {
		sink.Close()
		return nil, Outcome{}, err
	}
	exports, err := c.newExporting(start)
	if err != nil {
		spans.stop(true)
		sink.Close()
		return nil, Outcome{}, err
	}
	runSink := exports.sink(sink)
	stop, release := c.stopContext(ctx)
	defer release()
	runCtx, cancel := context.WithCancelCause(stop)
	defer cancel(nil)
	// Each VU backs off on its own when the target stops answering; the
	// tracker sees every VU's outcomes and records the outages run-wide.
	policy, reach := backoff.DefaultPolicy(), backoff.NewTracker()
	lines := &culprit{mem: c.Memory}
	spent := c.newSpend(cancel)
	vuRunner := spent.wrap(lines.wrap(c.NewRunner(RunnerDeps{Client: spent.client(c.Client), Sink: runSink,
		Model: c.runnerModel(), Policy: &policy, Reach: reach, Stop: stop, Observe: c.observe()})))
	eng := executor.New(c.Plan, vuRunner, runSink)
	if c.Barrier != nil {
		eng.SetStartGate(c.Barrier)
	}
	exports.start(eng)
	go watchThresholds(runCtx, cancel, c.Thresholds, eng, col)
	sameBox, localServer := c.localServer(ctx, simulated)
	mon := selfcheck.Start(selfcheck.DefaultInterval, sameBox...)
	judgeProbes(eng, probes, mon)
	scraper := c.startScraper(endpoints, eng, start)
	gpus := c.startGPU(start)
	stopProgress := c.startProgress(eng, col)
	meter := startProcessMeter()
	c.announceSegment(start)
	end := c.execute(runCtx, cancel, eng)
	if c.LoadEnded != nil {
		c.LoadEnded()
	}
	end.capacity = capacityOutcomes(eng, &end)
	end.pools = poolFigures(eng.Pools())
	end.spend = spent.summary()
	process := meter.stop(simulated)
	stopProgress()
	mon.Stop()
	meta := c.meta(simulated, start, runclock.Now(), &end)
	meta.Process, meta.LocalServer = process, localServer
	meta.Segment = c.segment(eng)
	var server *servermetrics.Result
	if scraper != nil && !end.aborted { // a scrape in flight could take seconds
		server = scraper.Stop()
	}
	end.line = lines.line()
	c.flushSims(spans, end.aborted)
	spans.stop(end.aborted)
	sinkErr := sink.Close()
	// The final counts go out before the collector closes, so that what
	// was pushed last is what the result counts.
	exports.close(end.aborted)
	res, passed := c.result(meta, col, mon, server, reach, &end)
	res.ServerSpans = spans.summary()
	res.NegativeResiduals = sink.neg.list()
	c.addGPU(res, gpus)
	var refused *executor.StartError
	if errors.As(end.err, &refused) {
		// The barrier refused to start: nothing was sent, and a result
		// file might overwrite another attempt's of this segment.
		return nil, Outcome{}, refused.Err
	}
	exports.record(res)
	if err := c.printSummary(res); err != nil {
		return res, Outcome{}, err
	}
	// The baseline gate judges before the files are written, so that the
	// result file says when it failed (Meta.Gate): a file stored in a
	// history later must not pass for a baseline.
	out := judge(&end, res.Run.Verdict, c.gateStop(&end), passed)
	var gateErr error
	if out.Verdict == Passed && c.Gate != nil && sinkErr == nil {
		failed, err := c.Gate(res)
		switch {
		case err != nil:
			gateErr = err
		case failed != "":
			out = Outcome{GateFailed, failed}
			res.Run.Gate = failed
		}
	}
	if err := c.writeFiles(res); err != nil {
		return res, Outcome{}, err
	}
	if sinkErr != nil {
		return res, Outcome{}, sinkErr
	}
	if gateErr != nil {
		return res, Outcome{}, gateErr
	}
	return res, c.strict(res, out), nil
}

// stopContext is ctx, also ended by the memory bound when one is watched.
func (c *Config) stopContext(ctx context.Context) (context.Context, func()) {
	stop, cancel := context.WithCancelCause(ctx)
	if c.Memory == nil {
		return stop, func() { cancel(nil) }
	}
	mem := c.Memory.Context()
	unhook := context.AfterFunc(mem, func() { cancel(context.Cause(mem)) })
	return stop, func() { unhook(); cancel(nil) }
}

// execute runs the engine until it returns, or until Abort closes: then the
// run is canceled and left to stop on its own while the results are
// written, since the process is about to exit.
func (c *Config) execute(runCtx context.Context, cancel context.CancelCauseFunc, eng *executor.Engine) ending {
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	var e ending
	select {
	case e.err = <-done:
	case <-c.Abort:
		cancel(ErrAborted)
		e.err, e.aborted = ErrAborted, true
	}
	e.cause = context.Cause(runCtx)
	errors.As(e.cause, &e.memory)
	return e
}

// startProgress starts the Progress display, if any.
func (c *Config) startProgress(eng *executor.Engine, col *metrics.Collector) func() {
	if c.Progress == nil {
		return func() {}
	}
	return c.Progress(liveView{eng, col})
}

// liveView is what a progress display reads.
type liveView struct {
	eng *executor.Engine
	col *metrics.Collector
}

func (v liveView) Status() executor.Status { return v.eng.Status() }
func (v liveView) Live() metrics.Live      { return v.col.Live() }

// meta describes the run for the result.
func (c *Config) meta(simulated bool, start, end time.Time, e *ending) result.Meta {
	t := c.Plan.Target
	meta := result.Meta{
		Scenario: c.Plan.Script, Target: redact.URL(t.BaseURL), Model: t.Model,
		Simulator: simulated, Start: start, End: end, Version: c.Version, Seed: c.Plan.Seed,
		SLO: result.SLOFrom(c.Plan.SLO), Tokenizer: t.Tokenizer,
		Complete: e.err == nil, Plan: c.Fingerprint, PlanParts: c.PlanParts,
		Targets: c.targetsMeta(),
	}
	if len(meta.Targets) > 0 {
		meta.Target, meta.Model = targetsLine(meta.Targets)
	}
	if e.err != nil && !e.aborted && !errors.Is(e.err, context.Canceled) {
		meta.Aborted = "stopped by an error: " + e.err.Error()
	}
	return meta
}

// segment is the result's record of a segment run: which share, where,
// and when its load started against the barrier; nil for a whole run.
func (c *Config) segment(eng *executor.Engine) *result.Segment {
	seg := c.Plan.Segment
	if seg.Whole() {
		return nil
	}
	host, _ := os.Hostname()
	planned, actual := eng.LoadStart()
	return &result.Segment{Index: seg.Index, Count: seg.Count, Host: host,
		PlannedStart: planned.UTC(), ActualStart: actual.UTC()}
}

// announceSegment says which share of the plan runs and when its load is
// held until, since a segment that waits looks idle.
func (c *Config) announceSegment(now time.Time) {
	if seg := c.Plan.Segment; !seg.Whole() {
		c.log("segment %s: this process runs its share of the plan; thresholds are judged on the merged result (llmload merge)", seg)
	}
	if at := c.Plan.StartAt; !at.IsZero() {
		if wait := at.Sub(now); wait > 0 {
			c.log("--start-at: the load starts at %s, in %v (after VU init, setup and warmup)", at.UTC().Format(time.RFC3339Nano), wait.Round(time.Millisecond))
		} else {
			c.log("--start-at %s has passed: the load starts as soon as the VUs are ready", at.UTC().Format(time.RFC3339Nano))
		}
	}
}
