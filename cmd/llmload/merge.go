package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/barrier"
	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/merge"
	"github.com/llmload/llmload/engine/report"
	enginerun "github.com/llmload/llmload/engine/run"
)

const mergeUsage = `Usage: llmload merge [flags] SEGMENT.json...

Joins the results of one plan's segment runs ('llmload run --segment i/n
--out FILE', one file per segment) into the result one process running the
whole plan would have written: counts add, the stored histograms merge, and
percentiles, confidence intervals, thresholds, the knee and cliff analysis,
warnings and the verdict are computed again on the merged data. Files of
different plans (the error names what differs: the seed, the script, a --set
key, a data file, the plan's shape), seeds or segment counts, and a missing
or repeated segment are errors. The exit code is the merged run's: 0 passed,
1 nothing measured or a segment incomplete (the merged result is then marked
incomplete), 99 a threshold failed.

Flags:
`

// mergeFlags are the parsed flags of 'llmload merge'.
type mergeFlags struct {
	out, html, stagesCSV string
	quiet                bool
	wait                 time.Duration
	barrier              string
	history              historyFlags
}

func mergeCmd(args []string, stdout, stderr io.Writer) error {
	var f mergeFlags
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mergeUsage+fs.FlagUsages()) }
	fs.StringVar(&f.out, "out", "", `write the merged result as JSON to this file ("-": standard output, the summary then on standard error)`)
	fs.StringVar(&f.html, "html", "", "write the merged HTML report to this file")
	fs.StringVar(&f.stagesCSV, "csv-stages", "", "write one CSV row per merged stage to this file")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the summary")
	fs.DurationVar(&f.wait, "wait", 0, "wait up to this long for every file to exist and be a whole result\n(a merge started beside the segment runs, as 'llmload k8s' does)")
	f.history.register(fs, "store the merged run")
	fs.StringVar(&f.barrier, "barrier", "", "with --wait: the segments' --barrier directory; a segment that gave up there\n(DIR/abort-i) ends the wait at once")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("merge: %v", err)
	}
	if fs.NArg() == 0 {
		return usagef("merge: expected the segment result files, got none")
	}
	if f.wait < 0 {
		return usagef("merge: --wait %v must not be negative", f.wait)
	}
	if f.barrier != "" && f.wait == 0 {
		return usagef("merge: --barrier has no effect without --wait D: only a wait stops at a segment's abort file")
	}
	if f.out != "-" {
		if err := checkOutputs(f.out, f.html, f.stagesCSV); err != nil {
			return err
		}
	}
	if err := f.history.parse("merge", os.Getenv); err != nil {
		return err
	}
	hist, err := f.history.open()
	if err != nil {
		return err
	}
	if hist != nil {
		defer hist.Close()
	}
	in, err := readSegments(fs.Args(), f.wait, f.barrier, time.Sleep)
	if err != nil {
		return err
	}
	res, out, err := merge.Merge(in, version)
	if err != nil {
		return err
	}
	summary := stdout
	if f.out == "-" {
		summary = stderr
		if err := report.JSON(res)(stdout); err != nil {
			return err
		}
	} else if f.out != "" {
		if err := enginerun.WriteFile(f.out, report.JSON(res)); err != nil {
			return err
		}
	}
	if !f.quiet {
		if err := report.Text(res)(summary); err != nil {
			return err
		}
	}
	if err := enginerun.WriteRenderings(res, f.html, f.stagesCSV, func(string, ...any) {}); err != nil {
		return err
	}
	if hist != nil {
		verdict, reason := verdictOf(out, nil)
		// Unique: merging the same files again gives the same result byte
		// for byte, as when a merge pod that was disrupted after storing
		// is retried, and one run must not count twice in a baseline.
		e := history.Entry{Result: res, Labels: history.Labels(os.Getenv, f.history.parsed), Verdict: verdict, Reason: reason, Source: "merge", Unique: true}
		if err := store(hist, e, f.out, stderr); err != nil {
			if out.Verdict == enginerun.Passed {
				return err
			}
			fmt.Fprintf(stderr, "llmload: %v\n", err)
		}
	}
	return outcomeError(out, nil)
}

// mergePoll is how often --wait looks for the files again.
const mergePoll = time.Second

// readSegments reads every file; with a wait, a file that is missing or
// not yet a whole result is tried again until the wait is over, and then
// its last error is the one reported. With a barrier directory the wait
// also ends at once when a segment gave up there (barrier.Aborted).
func readSegments(paths []string, wait time.Duration, barrierDir string, sleep func(time.Duration)) ([]merge.Input, error) {
	deadline := time.Now().Add(wait)
	in := make([]merge.Input, len(paths))
	for {
		var pending error
		for i, p := range paths {
			if in[i].Result != nil {
				continue
			}
			res, err := readResult(p)
			if err != nil {
				pending = errors.Join(pending, err)
				continue
			}
			in[i] = merge.Input{Path: p, Result: res}
		}
		if pending == nil {
			return in, nil
		}
		if wait == 0 {
			return nil, pending
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("merge: --wait %v is over and not every segment result is there: %w", wait, pending)
		}
		if err := gaveUp(barrierDir); err != nil {
			return nil, err
		}
		sleep(min(mergePoll, time.Until(deadline)))
	}
}

// gaveUp is the error that ends a merge's wait when a segment gave up at
// the barrier in dir: its result will never come. nil without a dir or
// an abort file.
func gaveUp(dir string) error {
	if dir == "" {
		return nil
	}
	aborts, err := barrier.Aborted(dir)
	if err != nil || len(aborts) == 0 {
		return err
	}
	var why []string
	for _, a := range aborts {
		host := ""
		if a.Host != "" {
			host = " (on " + a.Host + ")"
		}
		why = append(why, fmt.Sprintf("segment %d%s gave up at the barrier: %s", a.Index, host, a.Reason))
	}
	return fmt.Errorf("merge: --barrier %s: %s; not every segment result will come", dir, strings.Join(why, "; "))
}
