package run

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
)

// Outputs are the files a run writes; empty names are not written.
type Outputs struct {
	Out    string // result JSON, at the end
	CSV    string // per-request CSV, as the run goes
	JSONL  string // per-request JSON lines, as the run goes
	HTML   string // HTML report, at the end
	Stages string // per-stage CSV, at the end
}

// printSummary prints the run's text summary, when it has somewhere to go.
func (c *Config) printSummary(res *result.Result) error {
	if c.Summary == nil {
		return nil
	}
	return report.Text(res)(c.Summary)
}

// writeFiles writes the result file and the renderings the outputs name.
func (c *Config) writeFiles(res *result.Result) error {
	if c.Outputs.Out != "" {
		if err := WriteFile(c.Outputs.Out, report.JSON(res)); err != nil {
			return err
		}
		c.log("results written to %s", c.Outputs.Out)
	}
	return WriteRenderings(res, c.Outputs.HTML, c.Outputs.Stages, c.log)
}

// WriteRenderings writes the optional HTML and per-stage CSV files, saying
// each one it wrote.
func WriteRenderings(res *result.Result, html, stagesCSV string, say func(string, ...any)) error {
	for _, out := range []struct {
		path string
		rep  report.Reporter
	}{{html, report.HTML(res)}, {stagesCSV, report.StagesCSV(res)}} {
		if out.path == "" {
			continue
		}
		if err := WriteFile(out.path, out.rep); err != nil {
			return err
		}
		say("written %s", out.path)
	}
	return nil
}

// WriteFile writes through a temporary file so a failed write never leaves
// a half-written result behind.
func WriteFile(path string, rep report.Reporter) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".llmload-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := rep(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
