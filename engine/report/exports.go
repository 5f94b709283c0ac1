package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeExports writes one line under the summary: each export and how it
// fared, so a dashboard's gap can be told from a quiet run.
func writeExports(b *bytes.Buffer, exports []result.Export) {
	if len(exports) == 0 {
		return
	}
	parts := make([]string, len(exports))
	for i, e := range exports {
		switch {
		case e.Kind == "listen":
			parts[i] = fmt.Sprintf("listen %s: %d %s", e.Target, e.Scrapes, textfmt.Plural(e.Scrapes, "scrape", "scrapes"))
			if e.Failures > 0 {
				parts[i] += ", the final counts unread"
			}
		case e.Failures > 0:
			parts[i] = fmt.Sprintf("%s %s: %d of %d %s FAILED", e.Kind, e.Target, e.Failures, e.Pushes, textfmt.Plural(e.Pushes, "push", "pushes"))
		default:
			parts[i] = fmt.Sprintf("%s %s: %d %s", e.Kind, e.Target, e.Pushes, textfmt.Plural(e.Pushes, "push", "pushes"))
		}
	}
	fmt.Fprintf(b, "\nexported: %s\n", strings.Join(parts, "; "))
}
