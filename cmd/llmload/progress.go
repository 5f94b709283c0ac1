package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	enginerun "github.com/llmload/llmload/engine/run"
)

// Progress refresh intervals: a terminal line is redrawn often; plain
// output (CI logs, pipes) gets a line now and then.
const (
	ttyInterval   = 500 * time.Millisecond
	plainInterval = 5 * time.Second
)

// progress prints a run's live progress line until stopped.
type progress struct {
	w     io.Writer
	live  enginerun.Live
	quiet bool
	tty   bool

	done chan struct{}
	wg   sync.WaitGroup
	last metrics.Live
	at   time.Time
}

func newProgress(w io.Writer, live enginerun.Live, quiet bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: w, live: live, quiet: quiet, tty: tty, done: make(chan struct{})}
}

func (p *progress) start() {
	if p.quiet {
		return
	}
	p.at = time.Now()
	interval := plainInterval
	if p.tty {
		interval = ttyInterval
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.print()
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	if p.tty && !p.quiet {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progress) print() {
	now := time.Now()
	live := p.live.Live()
	secs := now.Sub(p.at).Seconds()
	rps := float64(live.Requests-p.last.Requests) / secs
	tps := float64(live.OutputTokens-p.last.OutputTokens) / secs
	p.last, p.at = live, now
	line := fmt.Sprintf("%s | done %d, errors %d | %.1f req/s, %.0f tok/s",
		p.where(), live.Requests, live.Failed+live.IterationErrors, rps, tps)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// where describes the current phase: warmup, or each running scenario's
// stage, elapsed/total time and active VUs.
func (p *progress) where() string {
	st := p.live.Status()
	switch st.Phase {
	case executor.PhaseInit:
		return "starting VUs"
	case executor.PhaseWarmup:
		return fmt.Sprintf("warmup %d/%d", st.WarmupDone, st.WarmupTotal)
	case executor.PhaseWaiting:
		return "ready: holding the load at the start barrier (--start-at, --barrier)"
	}
	var parts []string
	for _, s := range st.Scenarios {
		if s.Done {
			continue
		}
		parts = append(parts, scenarioProgress(s))
	}
	if len(parts) == 0 {
		return "finishing in-flight requests"
	}
	return strings.Join(parts, "; ")
}

// scenarioProgress is one scenario's part of the progress line.
func scenarioProgress(s executor.ScenarioStatus) string {
	if s.StartsIn > 0 {
		return fmt.Sprintf("%s starts in %s", s.Name, s.StartsIn.Round(time.Second))
	}
	switch s.Executor {
	case plan.ExecutorTrace:
		return traceProgress(s)
	case plan.ExecutorCapacity:
		return capacityProgress(s)
	}
	at := fmt.Sprintf("%s stage %s (%d/%d) %s/%s", s.Name, s.Stage, s.StageIndex+1, s.Stages,
		s.Elapsed.Round(time.Second), s.Total.Round(time.Second))
	switch {
	case plan.OpenModel(s.Executor):
		return fmt.Sprintf("%s, %.1f/s target, %d of %s busy, %d dropped", at, s.Rate, s.BusyVUs, vus(s.AllocatedVUs), s.Dropped)
	case s.IterationsTotal > 0:
		return fmt.Sprintf("%s, %s, %d/%d iterations", at, vus(s.ActiveVUs), s.IterationsDone, s.IterationsTotal)
	}
	return fmt.Sprintf("%s, %s", at, vus(s.ActiveVUs))
}

// traceProgress is a replay's part: its one stage is the whole trace, so
// the records done of those it replays say how far it is.
func traceProgress(s executor.ScenarioStatus) string {
	rate := ""
	if s.Rate > 0 { // 0 once every record is dispatched
		rate = fmt.Sprintf(", %.1f/s mean", s.Rate)
	}
	return fmt.Sprintf("%s trace %s/%s, %d of %d records%s, %d of %s busy, %d dropped",
		s.Name, s.Elapsed.Round(time.Second), s.Total.Round(time.Second), s.IterationsDone, s.IterationsTotal,
		rate, s.BusyVUs, vus(s.AllocatedVUs), s.Dropped)
}

// capacityProgress is a search's part: its stages are made as it runs
// (Total is 0), so it shows the probe, its load and what the probe does.
func capacityProgress(s executor.ScenarioStatus) string {
	at := fmt.Sprintf("%s capacity search %s", s.Name, s.Elapsed.Round(time.Second))
	if s.Probe == 0 {
		return at // before the first probe, or judging the last
	}
	load, pool := vus(int(s.ProbeLoad)), vus(s.ActiveVUs)
	if s.Rate > 0 { // a search of rates: the load is a rate, the VUs a pool
		load = fmt.Sprintf("%.4g req/s", s.ProbeLoad)
		pool = fmt.Sprintf("%d of %s busy, %d dropped", s.BusyVUs, vus(s.AllocatedVUs), s.Dropped)
	}
	part := s.ProbePart
	if part == executor.ProbeWindow {
		part += " " + s.Stage // probe-03.2: the window an undecided probe added
	}
	return fmt.Sprintf("%s, probe %d at %s: %s, %s", at, s.Probe, load, part, pool)
}

// vus is "1 VU" or "n VUs".
func vus(n int) string {
	if n == 1 {
		return "1 VU"
	}
	return fmt.Sprintf("%d VUs", n)
}
