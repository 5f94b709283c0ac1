package plan

import "time"

// Export kinds: where a run's live metrics go (options.export, --export,
// --listen).
const (
	ExportPrometheusRW = "prometheus-rw" // Prometheus remote-write 1.0, pushed
	ExportOTLP         = "otlp"          // OTLP/HTTP metrics, pushed
	ExportListen       = "listen"        // a /metrics endpoint that a Prometheus scrapes
)

// ExportKinds are the kinds --export takes (listen has a flag of its own).
func ExportKinds() []string { return []string{ExportPrometheusRW, ExportOTLP} }

// DefaultExportEvery is how often the pushed exports send the run's
// metrics; the final counts are always sent once more at the end.
const DefaultExportEvery = 5 * time.Second

// Export says where a run streams its live metrics; the zero value
// exports nothing. It stays out of the plan's fingerprint, since segments
// of one run may export to different places.
type Export struct {
	// Targets are the pushed exports, at most one per kind.
	Targets []ExportTarget
	// Listen is the address of a /metrics endpoint ("" for none); with
	// ListenNative it offers native histograms to a scraper that
	// negotiates the protobuf format.
	Listen       string
	ListenNative bool
	// Every is the push interval; 0 means DefaultExportEvery.
	Every time.Duration
	// Tags are the user tags that become labels; others are not exported.
	Tags []string
	// RunID labels every series (run_id); "" lets the run make one.
	RunID string
	// Headers are sent with every push (an Authorization header, say);
	// their values are never printed.
	Headers map[string]string `json:"-"`
}

// ExportTarget is one pushed export.
type ExportTarget struct {
	Kind string // ExportPrometheusRW or ExportOTLP
	URL  string
	// Native sends native (exponential) histograms instead of classic
	// buckets: Prometheus 2.x takes them only with
	// --enable-feature=native-histograms.
	Native bool
}

// Enabled reports whether anything is exported.
func (e Export) Enabled() bool { return len(e.Targets) > 0 || e.Listen != "" }

// Target returns the target of kind k, if any.
func (e Export) Target(k string) (ExportTarget, bool) {
	for _, t := range e.Targets {
		if t.Kind == k {
			return t, true
		}
	}
	return ExportTarget{}, false
}

// SetTarget sets the target of t's kind, replacing one set before: a flag
// overrides the options.
func (e *Export) SetTarget(t ExportTarget) {
	for i := range e.Targets {
		if e.Targets[i].Kind == t.Kind {
			e.Targets[i] = t
			return
		}
	}
	e.Targets = append(e.Targets, t)
}
