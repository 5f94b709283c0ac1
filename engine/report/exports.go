package report

import (
	"bytes"
	"fmt"
	"strings"
)

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

// writeExports writes one line under the summary: each export and how it
// fared, so a dashboard's gap can be told from a quiet run.
func writeExports(b *bytes.Buffer, exports []Export) {
	if len(exports) == 0 {
		return
	}
	parts := make([]string, len(exports))
	for i, e := range exports {
		switch {
		case e.Kind == "listen":
			parts[i] = fmt.Sprintf("listen %s: %d %s", e.Target, e.Scrapes, plural(e.Scrapes, "scrape", "scrapes"))
			if e.Failures > 0 {
				parts[i] += ", the final counts unread"
			}
		case e.Failures > 0:
			parts[i] = fmt.Sprintf("%s %s: %d of %d %s FAILED", e.Kind, e.Target, e.Failures, e.Pushes, plural(e.Pushes, "push", "pushes"))
		default:
			parts[i] = fmt.Sprintf("%s %s: %d %s", e.Kind, e.Target, e.Pushes, plural(e.Pushes, "push", "pushes"))
		}
	}
	fmt.Fprintf(b, "\nexported: %s\n", strings.Join(parts, "; "))
}
