package plan

import (
	"time"
)

// Executors that are not k6's: a timed trace replayed as it was recorded,
// and a search for the highest load that still meets the SLO.
const (
	ExecutorTrace    = "trace"
	ExecutorCapacity = "capacity"
)

// Trace is the timed workload a trace scenario replays: one arrival per
// record kept (after time_offset, limit and speedup), in order of At.
type Trace struct {
	// Source names the file and format, e.g. "data/trace.jsonl (mooncake)".
	Source string
	// Digest identifies the file's content and the slice replayed, so a
	// plan's fingerprint changes when the trace does.
	Digest string
	// Arrivals are kept out of the plan's JSON: Digest stands for them.
	Arrivals []TraceArrival `json:"-"`
	// Speedup divides the records' time offsets (2 replays twice as fast).
	Speedup float64
	// TimeOffset and Limit are the slice replayed, as the scenario set
	// them: records from TimeOffset into the trace, at most Limit of them
	// (0: all); kept so that a report can say which part of the file ran.
	TimeOffset time.Duration
	Limit      int
	// Sessions are the distinct session ids among Arrivals (0 when the
	// trace has none or they are not replayed as conversations).
	Sessions int
	// Children counts the arrivals timed by a parent (TraceArrival.Parent):
	// when it is not 0 the records form trees, and the replay lasts until
	// the last of them has run, however long the server makes it.
	Children int
	// WarmTurns is the scenario's warm_turns: the arrivals of the first
	// WarmTurns turns of each session (levels of each tree) are Warm.
	WarmTurns int
}

// TraceArrival is one record's intended start.
type TraceArrival struct {
	// At is the intended start from the scenario's start: the record's
	// time less the first replayed record's, divided by the speedup. For a
	// child (Parent != 0) it is only the earliest it can start, as if every
	// ancestor had been answered at once: its start is its parent's end
	// plus Delay, known only as the replay runs.
	At time.Duration
	// Record is the record's 0-based index in the trace file, which the
	// iteration gets to build its request from.
	Record int
	// Session is 0 for a record of no session; otherwise the 1-based
	// number of its session. A session's records run in order, each no
	// earlier than its own time and after the previous one ended.
	Session int
	// Parent is 0 for a record timed by its own time (a root); otherwise
	// 1 + the index in Trace.Arrivals of the record whose answer it
	// follows. A parent always comes before its children.
	Parent int
	// Delay is a child's gap after its parent's iteration ended, divided
	// by the speedup.
	Delay time.Duration
	// Warm marks a record replayed as warmup (warm_turns): its samples are
	// kept out of every statistic.
	Warm bool
}

// Duration is the replay's planned length: the last arrival's offset. A
// trace of trees lasts at least that long (Stretches): its children start
// when their parents have been answered.
func (t *Trace) Duration() time.Duration {
	if t == nil || len(t.Arrivals) == 0 {
		return 0
	}
	return t.Arrivals[len(t.Arrivals)-1].At
}

// Stretches reports whether the replay lasts until its last record has
// run rather than until the last record's time: its records form trees.
func (t *Trace) Stretches() bool { return t != nil && t.Children > 0 }

// Capacity search loads: an arrival rate (open model) or VUs (closed).
const (
	CapacityRate = "rate"
	CapacityVUs  = "vus"
)

// CapacitySearch is a capacity scenario's search: probes of rising load
// until the SLO breaks (the bracket), then bisection between the highest
// load that held and the lowest that broke, to Precision.
type CapacitySearch struct {
	Load  string  // CapacityRate or CapacityVUs
	Start float64 // the first probe's load (iterations/s, or VUs)
	// Max bounds the bracket: a search that still holds at Max reports a
	// capacity of at least Max.
	Max float64
	// Growth multiplies the load between bracket probes (> 1).
	Growth float64
	// Precision is the bracket's relative width, (hi − lo) / lo, at which
	// bisection stops; VUs stop at a width of one VU at the latest.
	Precision float64
	// Warmup runs before each probe's window; its requests are not judged.
	Warmup time.Duration
	// Window is the probe's measurement window; an undecided probe is
	// extended by Window at a time, up to MaxWindow in all.
	Window    time.Duration
	MaxWindow time.Duration
	// GoodShare is the share of a probe's requests that must meet the
	// plan's SLO (0: not judged this way).
	GoodShare float64
	// Conditions are threshold conditions every probe must meet, each
	// judged on the probe's own requests: "ttft.p99 < 1s".
	Conditions []string
	// MinSamples is the fewest requests a probe passes on (a clear
	// failure decides sooner). Where MaxWindow cannot hold that many at a
	// rate, the probe is judged on what it can hold (Probe.MinSamples),
	// with the wider interval that gives.
	MinSamples int
	// IdleTimeout bounds the wait between probes for the previous probe's
	// requests to end and the server to report an empty queue; a server
	// still busy then stops the search.
	IdleTimeout time.Duration
}

// DefaultProbeIdleTimeout is CapacitySearch.IdleTimeout where a search sets
// none.
const DefaultProbeIdleTimeout = 2 * time.Minute
