package servermetrics

import (
	"fmt"
	"strings"
)

// Series is one chosen server metric over time.
type Series struct {
	Name string    `json:"name"` // e.g. "vllm:num_requests_waiting" or "vllm:time_to_first_token_seconds:p99"
	Help string    `json:"help,omitempty"`
	Unit string    `json:"unit,omitempty"` // UnitRequests, UnitFraction, UnitMS or UnitPerSecond
	T    []float64 `json:"t"`              // seconds since the run start
	V    []float64 `json:"v"`
}

// Units of a Series.
const (
	UnitRequests  = "requests"
	UnitFraction  = "fraction"
	UnitMS        = "ms"
	UnitPerSecond = "1/s"
)

// Result is what a Scraper saw over a run.
type Result struct {
	URL      string   `json:"url"` // credentials removed
	EveryS   float64  `json:"every_s"`
	Scrapes  int      `json:"scrapes"`
	Failures int      `json:"failures"`
	Errors   []string `json:"errors,omitempty"` // distinct messages with counts, at most MaxErrors
	Series   []Series `json:"series"`
}

// Lookup returns the series named name, or nil.
func (r *Result) Lookup(name string) *Series {
	for i := range r.Series {
		if r.Series[i].Name == name {
			return &r.Series[i]
		}
	}
	return nil
}

// MaxErrors bounds the distinct error messages a Result keeps; later new
// messages are counted under one "other errors" line.
const MaxErrors = 10

// errorLog counts failures by message, in order of first appearance, so a
// flapping endpoint yields a few lines rather than one per scrape. Not
// safe for concurrent use.
type errorLog struct {
	order  []string
	counts map[string]int
	other  int
}

func (l *errorLog) add(msg string) {
	if l.counts == nil {
		l.counts = make(map[string]int)
	}
	if _, seen := l.counts[msg]; !seen && len(l.order) >= MaxErrors {
		l.other++
		return
	}
	if l.counts[msg] == 0 {
		l.order = append(l.order, msg)
	}
	l.counts[msg]++
}

// lines renders each message with its count, "HTTP 500 (3×)".
func (l *errorLog) lines() []string {
	var out []string
	for _, m := range l.order {
		out = append(out, fmt.Sprintf("%s (%d×)", m, l.counts[m]))
	}
	if l.other > 0 {
		out = append(out, fmt.Sprintf("other errors (%d×)", l.other))
	}
	return out
}

// oneLine keeps a message on one line and short, for bodies quoted in errors.
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > limit {
		s = strings.ToValidUTF8(s[:limit], "") + "…" // a cut rune is dropped
	}
	return s
}
