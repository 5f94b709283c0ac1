package result

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/textfmt"
)

// Capacity is what one capacity search found: the highest load at which a
// probe still met the SLO, the interval it lies in, and every probe.
type Capacity struct {
	Scenario string `json:"scenario"`
	// Load is what was searched, engine.CapacityRate or CapacityVUs, and
	// Unit its unit: "req/s" (iterations started per second) or "VUs".
	Load string `json:"load"`
	Unit string `json:"unit"`
	// Capacity is the estimate, the middle of [Lo, Hi]: Lo is the highest
	// load that held, Hi the lowest that broke (0 when none broke, and
	// AtLeast is set: the search held at its max, Capacity = Lo). Lo is 0
	// when no probe held.
	Capacity float64 `json:"capacity"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	AtLeast  bool    `json:"at_least,omitempty"`
	// Stopped says why the search ended before it converged (llmload was
	// the bottleneck, an interrupt, ...); the interval is then only what
	// the probes decided so far.
	Stopped string          `json:"stopped,omitempty"`
	Search  CapacitySearch  `json:"search"`
	Probes  []CapacityProbe `json:"probes"`
}

// CapacitySearch is how a capacity search was set up (engine.CapacitySearch).
type CapacitySearch struct {
	Start     float64 `json:"start"`
	Max       float64 `json:"max"`
	Growth    float64 `json:"growth"`
	Precision float64 `json:"precision"`
	// GoodShare is the share of a probe's requests that had to meet the
	// run's SLO (Meta.SLO); 0 when not judged that way.
	GoodShare  float64  `json:"good_share,omitempty"`
	Conditions []string `json:"conditions,omitempty"`
	MinSamples int      `json:"min_samples"`
	WarmupS    float64  `json:"warmup_s"`
	WindowS    float64  `json:"window_s"`
	MaxWindowS float64  `json:"max_window_s"`
}

// Probe verdicts, as CapacityProbe.Verdict holds them.
const (
	ProbePass      = "pass"
	ProbeFail      = "fail"
	ProbeUndecided = "undecided" // still undecided at max_window
	ProbeStopped   = "stopped"   // llmload could not deliver or time the load
)

// CapacityProbe is one probe: where it was measured, its verdict and the
// figures that decided it, over all its windows.
type CapacityProbe struct {
	Index    int      `json:"index"` // 0-based, in the order run
	Stages   []string `json:"stages"`
	Load     float64  `json:"load"`
	Phase    string   `json:"phase"` // engine.ProbeBracket or ProbeBisect
	Extended int      `json:"extended,omitempty"`
	Verdict  string   `json:"verdict"`
	Why      string   `json:"why,omitempty"`
	Stop     string   `json:"stop,omitempty"`
	Requests int64    `json:"requests"`
	// GoodShare is the share of the requests that met the SLO; nil
	// without an SLO.
	GoodShare *float64 `json:"good_share,omitempty"`
	TTFTP50MS float64  `json:"ttft_p50_ms"`
	TTFTP99MS float64  `json:"ttft_p99_ms"`
	TPOTP99MS float64  `json:"tpot_p99_ms"`
	// ReqPerSec is the achieved rate: requests started in the windows per
	// second of them.
	ReqPerSec float64 `json:"req_per_sec"`
	// MinSamples is the fewest requests the probe was judged on: the
	// search's, or fewer at a rate max_window could not hold them at; 0
	// in files from before it was kept.
	MinSamples int `json:"min_samples,omitempty"`
	// Settle is how the probe started, after the wait for the previous
	// probe's requests to end and the server's queue to empty; absent for
	// a search's first probe.
	Settle *ProbeSettle `json:"settle,omitempty"`
}

// ProbeSettle is the wait before a probe (engine.ProbeSettle): how long,
// when its warmup began, whether it began clean (no request of an
// earlier probe running, the server's queue empty where read), the
// earlier iterations still running, and the server's last reading.
type ProbeSettle struct {
	WaitedS float64   `json:"waited_s"`
	Began   time.Time `json:"began"`
	Idle    bool      `json:"idle"`
	Running int       `json:"running,omitempty"`
	Server  string    `json:"server,omitempty"`
}

// Text is the probe's start, for its reason line: "started after a 12.3 s
// wait for the load to drain (llamacpp:requests_processing 0, ...)".
func (s *ProbeSettle) Text() string {
	if s == nil {
		return ""
	}
	t := fmt.Sprintf("started after a %.1f s wait for the last probe's requests to end", s.WaitedS)
	if s.Server != "" {
		t += " and the server to drain (" + s.Server + ")"
	}
	if !s.Idle {
		t += fmt.Sprintf(", not clean: %d still running", s.Running)
	}
	return t
}

// CapacityUnit is the unit of a capacity search's load.
func CapacityUnit(load string) string {
	if load == plan.CapacityVUs {
		return "VUs"
	}
	return "req/s"
}

// Answer is the search's finding in one line: "capacity 41.5 req/s,
// between 39.8 and 43.2", "capacity at least 100 req/s (held at the
// search's max)", or "capacity below 1 req/s (the lowest load probed
// broke)".
func (c *Capacity) Answer() string {
	switch {
	case c.AtLeast:
		return fmt.Sprintf("capacity at least %s %s (held at the search's max)", textfmt.Load(c.Lo), c.Unit)
	case c.Lo <= 0 && c.Hi > 0:
		return fmt.Sprintf("capacity below %s %s (the lowest load probed broke)", textfmt.Load(c.Hi), c.Unit)
	case c.Lo <= 0:
		return "capacity unknown: no probe was decided"
	case c.Hi <= 0:
		return fmt.Sprintf("capacity at least %s %s (no probe broke)", textfmt.Load(c.Lo), c.Unit)
	}
	return fmt.Sprintf("capacity %s %s, between %s and %s", textfmt.Load(c.Capacity), c.Unit, textfmt.Load(c.Lo), textfmt.Load(c.Hi))
}

// Criteria says what each probe had to meet: "good ≥ 95% within TTFT ≤
// 1s, ttft.p99 < 1s".
func (c *Capacity) Criteria(slo *SLO) string {
	var parts []string
	if g := c.Search.GoodShare; g > 0 {
		parts = append(parts, fmt.Sprintf("good ≥ %s%% within %s", textfmt.Load(100*g), cmp.Or(SLOText(slo), "the SLO")))
	}
	return strings.Join(append(parts, c.Search.Conditions...), ", ")
}

// SLOText names the SLO's objectives: "TTFT ≤ 1s, TPOT ≤ 50ms"; "" when
// none is set.
func SLOText(slo *SLO) string {
	var parts []string
	if slo != nil {
		for _, o := range []struct {
			name string
			ms   float64
		}{{"TTFT", slo.TTFTMS}, {"TPOT", slo.TPOTMS}, {"E2E", slo.E2EMS}} {
			if o.ms > 0 {
				parts = append(parts, o.name+" ≤ "+plan.FormatDuration(textfmt.Duration(o.ms)))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// AddCapacity records what capacity searches found, with a warning for
// each that stopped before it converged: its answer is not the whole truth.
func (r *Result) AddCapacity(cs ...Capacity) {
	for _, c := range cs {
		r.Capacity = append(r.Capacity, c)
		if c.Stopped != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("capacity search %s stopped before it converged: %s; its %s is only what the probes decided so far",
				c.Scenario, c.Stopped, c.Answer()))
		}
	}
}
