package library

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Print writes one line per scenario that could be read: its file name,
// its summary and the keys its source reads, in aligned columns.
func Print(w io.Writer, list []Scenario) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range list {
		if s.Err != nil {
			continue
		}
		keys := joinKeys(s.Keys)
		if s.Dynamic > 0 {
			keys = strings.TrimSpace(keys + fmt.Sprintf(" (and keys computed at line %d)", s.Dynamic))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name(), orDash(s.Summary), orDash(keys))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
