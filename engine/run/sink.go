package run

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/requestlog"
	"github.com/llmload/llmload/engine/traces"
)

// recordingSink is the collector plus the per-request files, which are
// written as samples arrive so an interrupted run keeps every record.
type recordingSink struct {
	*metrics.Collector
	writers []*requestlog.RequestWriter
	files   []*os.File
	// join, when the run receives the server's spans, holds each traced
	// request's record until its span came (startSpans); neg names the
	// requests whose residual was negative.
	join *traces.Joiner
	neg  negatives
}

// newRecordingSink opens the per-request files out names; with none, it is
// the collector alone.
func newRecordingSink(col *metrics.Collector, out Outputs, start time.Time) (*recordingSink, error) {
	s := &recordingSink{Collector: col}
	for _, f := range []struct{ path, format string }{{out.CSV, requestlog.FormatCSV}, {out.JSONL, requestlog.FormatJSONL}} {
		if f.path == "" {
			continue
		}
		file, err := os.Create(f.path)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("per-request records: %w", err)
		}
		w, err := requestlog.NewRequestWriter(file, f.format, start)
		if err != nil {
			file.Close()
			s.Close()
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		s.writers, s.files = append(s.writers, w), append(s.files, file)
	}
	return s, nil
}

// Sample records x in the collector, and in every file at once or, for
// a traced request of a run that receives spans, once its span joined it
// or its wait ended (joined).
func (s *recordingSink) Sample(x engine.Sample) {
	s.Collector.Sample(x)
	s.neg.note(&x)
	if s.join != nil && x.TraceID != "" {
		s.join.Sample(x)
		return
	}
	s.write(x)
}

// joined records a traced request whose span came (or did not, by its
// wait): its record, and its breakdown in the collector unless Sample
// already counted one from the server's timings.
func (s *recordingSink) joined(x engine.Sample) {
	s.write(x)
	if x.Span != nil && x.Server == nil {
		s.Collector.Breakdown(x)
		s.neg.note(&x)
	}
}

func (s *recordingSink) write(x engine.Sample) {
	for _, w := range s.writers {
		w.Write(x)
	}
}

// Close flushes and closes the files (not the collector). Samples that
// arrive afterwards reach the collector only, so it is safe to call while
// VUs still run (a second interrupt does).
func (s *recordingSink) Close() error {
	var errs []error
	for i, w := range s.writers {
		errs = append(errs, w.Close(), s.files[i].Close())
	}
	return errors.Join(errs...)
}
