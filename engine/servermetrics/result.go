package servermetrics

import (
	"fmt"
	"strings"
)

// Series is one chosen server metric over time.
type Series struct {
	Name string `json:"name"` // e.g. "vllm:num_requests_waiting" or "vllm:time_to_first_token_seconds:p99"
	// Role is what the series means on any server; "" for a series kept
	// only to be charted. Results written before roles existed have none:
	// RoleOf recovers it from the name.
	Role Role      `json:"role,omitempty"`
	Help string    `json:"help,omitempty"`
	Unit string    `json:"unit,omitempty"` // one of the Unit constants
	T    []float64 `json:"t"`              // seconds since the run start
	V    []float64 `json:"v"`
	// GPU is the device a GPU telemetry series describes; nil for the
	// server's series.
	GPU *GPU `json:"gpu,omitempty"`

	// rounds are the scrape rounds of the points (see poller.roundAt),
	// by which several endpoints' points are summed; never written.
	rounds []int
}

// Units of a Series.
const (
	UnitRequests        = "requests"
	UnitFraction        = "fraction"
	UnitMS              = "ms"
	UnitPerSecond       = "1/s"
	UnitTokensPerSecond = "tokens/s"
	UnitTokens          = "tokens"
	UnitCount           = "count"       // an increase over each scrape interval
	UnitTokensPerStep   = "tokens/step" // speculative decoding's tokens per decoding step
	UnitPercent         = "%"
	UnitWatts           = "W"
	UnitMiB             = "MiB"
	UnitJoules          = "J" // energy used over each scrape interval
)

// Result is what a Scraper saw over a run: of its one endpoint, or of
// several, when Endpoints holds each one's own Result and Series their
// sums (see Additive).
type Result struct {
	// URL is the endpoint's, credentials removed; "" for several.
	URL string `json:"url"`
	// Target is the name of the plan's target the endpoint serves; "" for
	// the one target, and for several endpoints.
	Target string `json:"target,omitempty"`
	// Discovered says the endpoint was found at the target's origin
	// rather than named by --metrics-url or metrics_url.
	Discovered bool     `json:"discovered,omitempty"`
	EveryS     float64  `json:"every_s"`
	Scrapes    int      `json:"scrapes"`
	Failures   int      `json:"failures"`
	Errors     []string `json:"errors,omitempty"` // distinct messages with counts, at most MaxErrors
	// Server is the kind of server the known metrics came from
	// (ServerVLLM, ServerSGLang, ServerTGI, ServerLlamaCpp), or the GPU
	// exporter (ServerDCGM, ServerNvidiaSMI); "" when none was known. Of
	// several endpoints, their common kind ("" when they differ).
	Server string `json:"server,omitempty"`
	// Families is how many metric families the latest successful scrape
	// held, Known how many metrics llmload maps were seen in any scrape,
	// and Examples a few of the families' names when none was known.
	Families int      `json:"families,omitempty"`
	Known    int      `json:"known,omitempty"`
	Examples []string `json:"examples,omitempty"`
	// Note says why the series are missing, in words (see Explain); ""
	// when nothing needs saying.
	Note   string   `json:"note,omitempty"`
	Series []Series `json:"series"`
	// Endpoints are each endpoint's own Result when there are several
	// (replicas, targets), in the order they were given; then the
	// Series above are the sums across them of the series that add up,
	// and Scrapes and Failures their totals. Absent for one endpoint.
	Endpoints []Result `json:"endpoints,omitempty"`
	// GPUs are the GPU exporters' own Results (NVIDIA's DCGM exporter)
	// among the endpoints, kept apart so that their series neither count
	// as a server's nor break the servers' sums; absent without one.
	GPUs []Result `json:"gpus,omitempty"`
	// GPUOnly says the endpoint was named as a GPU exporter
	// (--gpu-metrics), so that anything else there is explained as such.
	GPUOnly bool `json:"gpu_only,omitempty"`
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

// ByRole returns the first series with role r (its own, or the one its
// name has: see RoleOf), or nil. A nil Result has none.
func (r *Result) ByRole(role Role) *Series {
	if r == nil {
		return nil
	}
	for i := range r.Series {
		if RoleOf(&r.Series[i]) == role {
			return &r.Series[i]
		}
	}
	return nil
}

// ServerKind is the kind of server the series came from: Server, or for a
// result written before it existed, the kind of the first series named
// after a known server; "" for none.
func (r *Result) ServerKind() string {
	if r.Server != "" {
		return r.Server
	}
	for _, s := range r.Series {
		if k := kindOf(s.Name); k != "" {
			return k
		}
	}
	return ""
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
