package run

import (
	"runtime"
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
