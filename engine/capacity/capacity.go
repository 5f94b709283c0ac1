// Package capacity finds the highest load a deployment takes within its SLO:
// the contract between the executor's search (which changes the load between
// probes) and the judge of each probe's window, the judge itself, the
// threshold source a probe is judged on, and the search's outcome as the
// result file records it.
package capacity

import (
	"time"
)

// Settle is how a probe started: after the previous probe's load
// stopped, once its requests had ended and the server's own queue
// gauges (where its metrics are scraped) read zero.
type Settle struct {
	// Checked is false for a search's first probe: nothing ran before it.
	Checked bool
	// Waited is how long the search waited; Began is when the probe's
	// warmup began, after the wait.
	Waited time.Duration
	Began  time.Time
	// Running counts the iterations of earlier probes still running when
	// the wait ended (0 when they all ended).
	Running int
	// Server is the server's last queue reading ("llamacpp:requests_processing
	// 0, llamacpp:requests_deferred 0"), or why it could not be read; ""
	// when its metrics are not scraped.
	Server string
	// Idle says the probe started clean: no iteration running and, where
	// read, the server's queue empty.
	Idle bool
}

// Probe is one load level a capacity search measures.
type Probe struct {
	Scenario string
	// Stages are the stage names of the probe's windows, in order: the
	// first window's ("probe-03"), then one per extension ("probe-03.2",
	// ...). Each window is its own stage, so every stage's rates are over
	// time the load was measured; the probe is judged on all of them.
	Stages []string
	Index  int     // 0-based, in the order run
	Load   float64 // iterations/s or VUs
	Phase  string  // ProbeBracket or ProbeBisect
	// Start and End bound the measurement: the first window's start (after
	// the warmup) and the last window's end.
	Start, End time.Time
	// Extended counts the windows added because the first could not decide.
	Extended int
	// MinSamples is the fewest requests this probe is judged on: the
	// search's, or fewer where MaxWindow at this load cannot hold them.
	MinSamples int
	// Settle is how the probe started.
	Settle Settle
}

// Capacity search phases.
const (
	ProbeBracket = "bracket"
	ProbeBisect  = "bisect"
)

// Verdict is a judge's decision on a probe.
type Verdict struct {
	// Decided is false when the probe's samples cannot decide yet (too
	// few, or a confidence interval that straddles the limit): the search
	// extends the window rather than judge noise.
	Decided bool
	Pass    bool
	// Stop, when set, ends the search: llmload itself could not deliver
	// or time the load (it was the bottleneck), so no verdict is sound.
	Stop string
	// Why says what decided it, e.g. "good 97.1% ≥ 95% (n=412)".
	Why string
}

// Judge decides probes. JudgeProbe is called once every request that
// started in the probe's window has ended (or been given up on), and may
// be called again for the same probe after its window was extended.
type Judge interface {
	JudgeProbe(p Probe) Verdict
}

// Outcome is what a capacity search found.
type Outcome struct {
	Scenario string
	Load     string // CapacityRate or CapacityVUs
	// Capacity is the estimate: the middle of [Lo, Hi], the highest load
	// that held and the lowest that broke. Without a broken probe (the
	// search held at Max) it is Lo and AtLeast is set; when no probe held,
	// Lo is 0.
	Capacity float64
	Lo, Hi   float64
	AtLeast  bool
	// Stopped says why the search ended before it converged (llmload was
	// the bottleneck, an interrupt, an aborting threshold); "" when it
	// converged or reached Max.
	Stopped string
	Probes  []ProbeResult
}

// ProbeResult is one probe with its verdict.
type ProbeResult struct {
	Probe
	Verdict Verdict
}
