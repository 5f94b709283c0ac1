// Package report renders a run's result (engine/result): one Reporter per
// format — text, HTML, Markdown, the stages' CSV and the plan — all reading
// the same Result, so aggregation stays in engine/metrics and the schema in
// engine/result.
package report

import "io"

// Reporter writes one rendering of a result.
type Reporter func(w io.Writer) error
