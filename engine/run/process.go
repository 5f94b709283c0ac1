package run

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/selfcheck"
)

// processMeter measures what the process uses between its start and
// stop: CPU time, garbage collections, and the peak resident set.
type processMeter struct {
	usage selfcheck.Usage
	ok    bool
	gc    runtime.MemStats
}

func startProcessMeter() *processMeter {
	m := &processMeter{}
	m.usage, m.ok = selfcheck.ReadUsage()
	runtime.ReadMemStats(&m.gc)
	return m
}

// stop returns the usage since start, nil where it cannot be read.
func (m *processMeter) stop(withSimulator bool) *result.Process {
	u, ok := selfcheck.ReadUsage()
	if !ok || !m.ok {
		return nil
	}
	var gc runtime.MemStats
	runtime.ReadMemStats(&gc)
	sec := func(d time.Duration) float64 { return d.Seconds() }
	return &result.Process{
		CPUUserS:      sec(u.User - m.usage.User),
		CPUSystemS:    sec(u.System - m.usage.System),
		MaxRSSMB:      float64(u.MaxRSS) / (1 << 20),
		GCCycles:      gc.NumGC - m.gc.NumGC,
		GCPauseMS:     float64(gc.PauseTotalNs-m.gc.PauseTotalNs) / 1e6,
		WithSimulator: withSimulator,
	}
}

// addHeld puts what the process held over the run into p: the series,
// thinned to result.MaxHeldPoints, and the drift over [first, last], a
// stage's span (none when it is too short to judge).
func addHeld(p *result.Process, held []selfcheck.Resources, runStart, first, last time.Time) {
	if p == nil || len(held) == 0 {
		return
	}
	mb := func(b int64) float64 {
		if b < 0 {
			return -1
		}
		return float64(b) / (1 << 20)
	}
	step := (len(held) + result.MaxHeldPoints - 1) / result.MaxHeldPoints
	for i := 0; i < len(held); i += step {
		h := held[i]
		p.Held = append(p.Held, result.HeldPoint{T: h.At.Sub(runStart).Seconds(), RSSMB: mb(h.RSS),
			HeapLiveMB: mb(h.HeapLive), Goroutines: h.Goroutines, OpenFiles: h.OpenFiles})
	}
	d := selfcheck.JudgeDrift(held, first, last)
	if d == nil {
		return
	}
	fig := func(c selfcheck.Change, scale float64) *result.DriftFigure {
		if !c.Measured {
			return nil
		}
		return &result.DriftFigure{Early: c.Early / scale, Late: c.Late / scale, ChangePercent: c.Percent(), Growing: c.Growing}
	}
	p.Drift = &result.Drift{
		FromS: d.From.Sub(runStart).Seconds(), ToS: d.To.Sub(runStart).Seconds(),
		RSSMB: fig(d.RSS, 1<<20), HeapLiveMB: fig(d.HeapLive, 1<<20),
		Goroutines: fig(d.Goroutines, 1), OpenFiles: fig(d.OpenFiles, 1),
	}
}

// driftWarning says that llmload's process grew over the load, or "".
// Beside the built-in simulator, whose prefix cache fills as a run goes
// on, growth is not llmload's alone: the summary's line shows it, with
// no warning.
func driftWarning(p *result.Process) string {
	if p == nil || p.Drift == nil || p.WithSimulator {
		return ""
	}
	g := p.Drift.Growing()
	if len(g) == 0 {
		return ""
	}
	return fmt.Sprintf("llmload's own %s grew by more than 10%% over the load after its warm-up (client self-check): "+
		"something in the client keeps growing — a script that keeps every answer, or a leak in llmload — and a longer run "+
		"would end in its memory bound", strings.Join(g, ", "))
}
