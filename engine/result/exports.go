package result

// Export is how one live export fared over the run (engine/export): its
// kind (prometheus-rw, otlp, listen), its target without credentials, the
// pushes made (the final flush included) or, for listen, the scrapes
// served, and the failures with the last error.
type Export struct {
	Kind      string `json:"kind"`
	Target    string `json:"target"`
	Pushes    int64  `json:"pushes"`
	Scrapes   int64  `json:"scrapes,omitempty"`
	Failures  int64  `json:"failures"`
	LastError string `json:"last_error,omitempty"`
}

// AddExports records the exports' health and their warnings (failed
// pushes, a missed final scrape, refused tags).
func (r *Result) AddExports(exports []Export, warnings []string) {
	r.Exports = exports
	r.Warnings = append(r.Warnings, warnings...)
}
