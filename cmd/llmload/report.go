package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
	enginerun "github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/truth"
)

const reportUsage = `Usage: llmload report [flags] RESULT.json

Renders a result file written by 'llmload run --out': the terminal summary,
and with --html a self-contained HTML report (charts as inline SVG, opens
offline), with --csv-stages one CSV row per stage. Older result files are
read too; an interrupted run renders what exists, marked incomplete. With
--truth, the run is also held against the server's own log of the same
requests ('llmload mock --truth-log'): llmload's error per percentile and
its CPU per streamed token.

Flags:
`

func reportCmd(args []string, stdout, stderr io.Writer) error {
	var html, stagesCSV, truthLog string
	var quiet bool
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reportUsage+fs.FlagUsages()) }
	fs.StringVar(&html, "html", "", "write the HTML report to this file")
	fs.StringVar(&stagesCSV, "csv-stages", "", "write one CSV row per stage to this file")
	fs.StringVar(&truthLog, "truth", "", "compare with this truth log (JSONL, from llmload mock --truth-log)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "do not print the terminal summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("report: %v", err)
	}
	if fs.NArg() != 1 {
		return usagef("report: expected one RESULT.json, got %s", arguments(fs.NArg()))
	}
	if quiet && html == "" && stagesCSV == "" && truthLog == "" {
		return usagef("report: --quiet with neither --html, --csv-stages nor --truth would do nothing")
	}
	res, err := readResult(fs.Arg(0))
	if err != nil {
		return err
	}
	if !quiet {
		if err := report.Text(res)(stdout); err != nil {
			return err
		}
	}
	if truthLog != "" {
		if err := writeTruth(stdout, res, fs.Arg(0), truthLog); err != nil {
			return err
		}
	}
	return enginerun.WriteRenderings(res, html, stagesCSV, func(string, ...any) {})
}

// writeTruth holds res against the truth log at path.
func writeTruth(w io.Writer, res *result.Result, resultPath, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := truth.Read(f, path)
	if err != nil {
		return err
	}
	c, err := truth.Compare(res, recs)
	if err != nil {
		return fmt.Errorf("%s against %s: %w", resultPath, path, err)
	}
	return c.Text(w)
}

// readResult reads and checks a result file, naming it in every error.
func readResult(path string) (*result.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := result.ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}
