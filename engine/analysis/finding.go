package analysis

import (
	"fmt"
	"strconv"
)

// Kinds of Finding.
const (
	KindKnee  = "knee"
	KindCliff = "cliff"
)

// Finding is a detected knee or cliff, with the rule that found it stated
// in words so a reader can check it. When Found is false, Stage, Load and
// Value are zero and Text says why nothing was found.
type Finding struct {
	Kind     string  `json:"kind"` // KindKnee or KindCliff
	Found    bool    `json:"found"`
	Scenario string  `json:"scenario"`
	Stage    string  `json:"stage,omitempty"`
	Load     float64 `json:"load,omitempty"`
	LoadUnit string  `json:"load_unit"`
	Metric   string  `json:"metric"`          // "req/s", or a percentile: "ttft_p50", "ttft_p90", "ttft_p99", "e2e_p50", …
	Value    float64 `json:"value,omitempty"` // the metric at that point (req/s or ms)
	Rule     string  `json:"rule"`
	Text     string  `json:"text"` // one line for a human
	// Suspect says why the finding may be the client side's, not the
	// server's: a stage it was found at or computed from was client-bound,
	// machine-busy, or had a window that slipped from the plan. "" when
	// nothing is known against it.
	Suspect string `json:"suspect,omitempty"`
	// Tentative says why the figures a finding was read from are too thin
	// to state it as fact: a percentile it compared was flagged unreliable
	// at a stage (too few samples). Text then starts with "tentative".
	Tentative string `json:"tentative,omitempty"`
	// Growth and LoadGrowth are the growth rule's ratios at a cliff: the
	// percentile's and the load's, from the level before. Zero otherwise.
	// Tag is "key=value" for a cliff read on one tag value's curve.
	Tag        string  `json:"tag,omitempty"`
	Growth     float64 `json:"growth,omitempty"`
	LoadGrowth float64 `json:"load_growth,omitempty"`
	// Server is what the server's own queue gauges say about the finding:
	// agreeing, disagreeing, or neither; nil without them (tag cliffs
	// are never checked: the server's queue is not per tag).
	Server *ServerCheck `json:"server,omitempty"`
	// Explained says which part of the latency grew into the finding,
	// from the server's timing of each request (engine.Breakdown); nil
	// when the stages have none.
	Explained *Explanation `json:"explained,omitempty"`
}

// loadText renders a load level with its unit: "1 VU", "8 VUs", "2.5 req/s".
func loadText(load float64, unit string) string {
	if unit == UnitVUs && load == 1 {
		return "1 VU"
	}
	return strconv.FormatFloat(load, 'g', 4, 64) + " " + unit
}

// msText renders a latency in milliseconds the way people say it: "92.5
// ms", "2.08 s".
func msText(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'g', 3, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'g', 3, 64) + " ms"
}

// rateText renders a request rate: "4.50 req/s".
func rateText(v float64) string { return fmt.Sprintf("%.2f req/s", v) }
