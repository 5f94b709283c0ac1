package report

import (
	"io"

	"github.com/llmload/llmload/engine/result"
)

// JSON renders r as the result file's indented JSON.
func JSON(r *result.Result) Reporter {
	return func(w io.Writer) error { return result.WriteJSON(w, r) }
}
