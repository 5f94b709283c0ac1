package run

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/requestlog"
)

// recordingSink is the collector plus the per-request files, which are
// written as samples arrive so an interrupted run keeps every record.
type recordingSink struct {
	*metrics.Collector
	writers []*requestlog.RequestWriter
	files   []*os.File
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

// Sample records x in every file and in the collector.
func (s *recordingSink) Sample(x engine.Sample) {
	for _, w := range s.writers {
		w.Write(x)
	}
	s.Collector.Sample(x)
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
