package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/llmload/llmload/engine/lint"
	"github.com/llmload/llmload/engine/textfmt"
)

// Lints renders lints as the summary lists them, for `llmload check` and
// the start of `llmload run`: a headline counting them, then each lint
// with its fix; an ignored one with the reason instead of the fix.
func Lints(ls []lint.Lint) Reporter {
	return func(w io.Writer) error {
		var b bytes.Buffer
		writeLintList(&b, ls)
		_, err := w.Write(b.Bytes())
		return err
	}
}

// writeLints is the summary's lints block, near its warnings.
func writeLints(b *bytes.Buffer, ls []lint.Lint) {
	if len(ls) == 0 {
		return
	}
	b.WriteString("\n")
	writeLintList(b, ls)
}

func writeLintList(b *bytes.Buffer, ls []lint.Lint) {
	if len(ls) == 0 {
		return
	}
	fmt.Fprintf(b, "lints: %s (good practice, checked: docs/scenarios.md; --strict fails on a warning)\n", lintCounts(ls))
	const indent, more = "           ", "             "
	for _, l := range ls {
		head := l.ID
		if w := l.Where(); w != "" {
			head += " [" + w + "]"
		}
		b.WriteString(wrap(head+": "+l.Message, fmt.Sprintf("  %-8s ", lintMark(l)), indent, maxWidth))
		if l.Ignored != "" {
			b.WriteString(wrap("ignored: "+l.Ignored, indent, more, maxWidth))
			continue
		}
		b.WriteString(wrap("fix: "+l.Fix, indent, more, maxWidth))
	}
}

// lintMark is a lint's severity, or "ignored".
func lintMark(l lint.Lint) string {
	if l.Ignored != "" {
		return "ignored"
	}
	return string(l.Severity)
}

// lintCounts is "1 warning, 2 info, 1 ignored".
func lintCounts(ls []lint.Lint) string {
	var warn, info, ignored int
	for _, l := range ls {
		switch {
		case l.Ignored != "":
			ignored++
		case l.Severity == lint.Warning:
			warn++
		default:
			info++
		}
	}
	var parts []string
	if warn > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", warn, textfmt.Plural(int64(warn), "warning", "warnings")))
	}
	if info > 0 {
		parts = append(parts, fmt.Sprintf("%d info", info))
	}
	if ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d ignored", ignored))
	}
	return strings.Join(parts, ", ")
}
