// Package textfmt writes figures and lists in words the same way wherever
// llmload prints them: the warnings a result carries and every report that
// renders one, so a number reads alike in both.
package textfmt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/metrics"
)

// Plural picks the noun's form for n.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with its noun in the right number: "1 request", "2 requests".
func Count(n int64, one, many string) string { return fmt.Sprint(n) + " " + Plural(n, one, many) }

// MS is a millisecond figure to three significant digits, whole above 100.
func MS(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// DistMS is a figure of d in milliseconds with the precision its size
// needs, or "-" when d has no samples.
func DistMS(d metrics.Dist, v float64) string {
	switch {
	case d.Count == 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// Duration turns milliseconds into a time.Duration.
func Duration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// MaxWidth bounds a tag key or value, or a listed kind, so that a long
// value cannot push a table or a line past the terminal's width.
const MaxWidth = 24

// Clip shortens s to MaxWidth columns, on one line.
func Clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > MaxWidth {
		return string(r[:MaxWidth-1]) + "…"
	}
	return s
}

// maxListed bounds the kinds a summary line names.
const maxListed = 6

// KindList names kinds, each clipped, the ones beyond six counted.
func KindList(kinds []string) string {
	names := make([]string, 0, min(len(kinds), maxListed)+1)
	for _, k := range kinds[:min(len(kinds), maxListed)] {
		names = append(names, Clip(k))
	}
	if extra := len(kinds) - maxListed; extra > 0 {
		names = append(names, fmt.Sprintf("%d more", extra))
	}
	return strings.Join(names, ", ")
}

// Load prints a load as a user would write it: 41.5, 12, 0.25.
func Load(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.4g", v), ".0") }
