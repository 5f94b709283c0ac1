package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

const historyUsage = `Usage: llmload history COMMAND [flags]

Reads and keeps the run history that 'llmload run --history DSN' and
'llmload merge --history DSN' store (DSN: sqlite:FILE or
postgres://USER:PASSWORD@HOST:PORT/DB; default $LLMLOAD_HISTORY).

Commands:
  list                  the stored runs, newest first
  show RUN              one run: its metadata, labels and summary (RUN: an id or "last")
  trend METRIC          one metric of each stage across runs: a sparkline and a table
  check                 find sustained shifts (change points) over the last runs; exit 99 on one for the worse
  report --html FILE    an HTML trend report: a chart per gated metric and stage, change points marked
  export                the runs' stage rows as CSV, or the runs as JSON lines
  import RESULT.json... store result files written before (run --out, merge --out)
  prune                 delete runs: --keep N per plan, or --older DURATION

Run 'llmload history COMMAND --help' for a command's flags. See docs/history.md.
`

func historyCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("history: expected a command (list, show, trend, check, report, export, import, prune)")
	}
	cmds := map[string]func([]string, io.Writer, io.Writer) error{
		"list": historyList, "show": historyShow, "trend": historyTrend, "check": historyCheck,
		"report": historyReport, "export": historyExport, "import": historyImport, "prune": historyPrune,
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, historyUsage)
		return nil
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return usagef("history: unknown command %q (list, show, trend, check, report, export, import, prune)", args[0])
	}
	return cmd(args[1:], stdout, stderr)
}

// selectFlags are the flags that choose runs, shared by the history
// commands that read.
type selectFlags struct {
	dsn          string
	scenario     string
	target       string
	fingerprint  string
	labels       []string
	since, until string
	limit        int
	filter       history.Filter
}

func (s *selectFlags) register(fs *pflag.FlagSet, limit int) {
	fs.StringVar(&s.dsn, "history", "", "the history store: sqlite:FILE or postgres://USER@HOST/DB (default $LLMLOAD_HISTORY)")
	fs.StringVar(&s.scenario, "scenario", "", "only runs of this scenario (its path as run was given it, or its file name)")
	fs.StringVar(&s.target, "target", "", "only runs against this target (its base URL as list shows it)")
	fs.StringVar(&s.fingerprint, "plan", "", "only runs of this plan fingerprint (as list --format json shows it)")
	fs.StringArrayVar(&s.labels, "label", nil, "only runs with this label, key=value (repeatable)")
	fs.StringVar(&s.since, "since", "", "only runs started since: a date (2026-12-01), an RFC 3339 time, or an age (36h, 7d)")
	fs.StringVar(&s.until, "until", "", "only runs started before: a date, an RFC 3339 time, or an age")
	fs.IntVar(&s.limit, "limit", limit, "at most this many runs, the newest (0: all)")
}

// parse validates the selection; cmd names the command for errors.
func (s *selectFlags) parse(cmd string, now time.Time) error {
	if s.dsn == "" {
		s.dsn = os.Getenv("LLMLOAD_HISTORY")
	}
	if s.dsn == "" {
		return usagef("history %s: give --history DSN (or set LLMLOAD_HISTORY)", cmd)
	}
	if _, err := history.ParseDSN(s.dsn); err != nil {
		return usagef("history %s: --history: %v", cmd, err)
	}
	labels, err := history.ParseLabels("--label", s.labels)
	if err != nil {
		return usagef("history %s: %v", cmd, err)
	}
	if s.limit < 0 {
		return usagef("history %s: --limit %d must not be negative", cmd, s.limit)
	}
	f := history.Filter{Scenario: s.scenario, Target: s.target, Fingerprint: s.fingerprint, Labels: labels, Limit: s.limit}
	if f.Since, err = parseWhen(s.since, now); err != nil {
		return usagef("history %s: --since %v", cmd, err)
	}
	if f.Until, err = parseWhen(s.until, now); err != nil {
		return usagef("history %s: --until %v", cmd, err)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return usagef("history %s: --until %s is not after --since %s", cmd, s.until, s.since)
	}
	s.filter = f
	return nil
}

func (s *selectFlags) open() (*history.Store, error) {
	return openExisting(s.dsn)
}

// openExisting opens a store for a command that reads it: a SQLite file
// that does not exist is an error, not an empty history.
func openExisting(dsn string) (*history.Store, error) {
	src, err := history.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	src.MustExist = true
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return history.Open(ctx, src)
}

// parseWhen reads a point in time: a date, an RFC 3339 time, or an age
// before now ("36h", "7d", "2w").
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want a date (2026-12-01), an RFC 3339 time, or an age (36h, 7d, 2w)", s)
}

// parseAge reads a duration with Go's units, or whole days ("7d") and
// weeks ("2w").
func parseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			v, err := strconv.Atoi(s[:n-1])
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("%q: want a positive age such as 7d", s)
			}
			return time.Duration(v) * u, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive age such as 36h or 7d", s)
	}
	return d, nil
}

// newHistoryFlags makes a command's flag set with its usage.
func newHistoryFlags(name, usage string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("history "+name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage+"\nFlags:\n"+fs.FlagUsages()) }
	return fs
}

// parseHistoryFlags parses args, mapping help and errors as the other
// commands do.
func parseHistoryFlags(fs *pflag.FlagSet, name string, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("history %s: %v", name, err)
	}
	return nil
}

func historyList(args []string, stdout, stderr io.Writer) error {
	var sel selectFlags
	var format string
	fs := newHistoryFlags("list", "Usage: llmload history list [flags]\n\nLists the stored runs, newest first.\n", stderr)
	sel.register(fs, 50)
	fs.StringVar(&format, "format", "text", "text or json")
	if err := parseHistoryFlags(fs, "list", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history list: unexpected arguments %v", fs.Args())
	}
	if format != "text" && format != "json" {
		return usagef("history list: --format %q: want text or json", format)
	}
	if err := sel.parse("list", time.Now()); err != nil {
		return err
	}
	st, err := sel.open()
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.List(context.Background(), sel.filter)
	if err != nil {
		return err
	}
	if format == "json" {
		return writeJSON(stdout, runsJSON(runs))
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs in %s match\n", st.Source())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED (UTC)\tSCENARIO\tPLAN\tMODEL\tVERDICT\tLABELS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Start.UTC().Format("2006-01-02 15:04:05"), r.Scenario,
			short(r.Fingerprint), orDash(r.Model), verdictText(r), orDash(history.FormatLabels(r.Labels)))
	}
	return tw.Flush()
}

// verdictText is a run's verdict with its completeness.
func verdictText(r history.Run) string {
	v := r.Verdict
	if !r.Complete {
		v += " (incomplete)"
	}
	return v
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return orDash(fp)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runJSON is a run as list --format json and export --format jsonl write it.
type runJSON struct {
	ID       int64             `json:"id"`
	Stored   time.Time         `json:"stored_at"`
	Start    time.Time         `json:"started_at"`
	End      time.Time         `json:"ended_at"`
	Scenario string            `json:"scenario"`
	Plan     string            `json:"plan"`
	Target   string            `json:"target"`
	Model    string            `json:"model"`
	Seed     int64             `json:"seed"`
	Segments int               `json:"segments,omitempty"`
	Complete bool              `json:"complete"`
	Verdict  string            `json:"verdict"`
	Reason   string            `json:"reason,omitempty"`
	Source   string            `json:"source"`
	Version  string            `json:"llmload_version"`
	Labels   map[string]string `json:"labels"`
	Result   *result.Result    `json:"result,omitempty"`
}

func toJSON(r history.Run) runJSON {
	return runJSON{ID: r.ID, Stored: r.Stored.UTC(), Start: r.Start.UTC(), End: r.End.UTC(), Scenario: r.Scenario,
		Plan: r.Fingerprint, Target: r.Target, Model: r.Model, Seed: r.Seed, Segments: r.Segments, Complete: r.Complete,
		Verdict: r.Verdict, Reason: r.Reason, Source: r.Source, Version: r.Version, Labels: r.Labels}
}

func runsJSON(runs []history.Run) []runJSON {
	out := make([]runJSON, len(runs))
	for i, r := range runs {
		out[i] = toJSON(r)
	}
	return out
}

// parseRunID reads a RUN argument: an id, or "last".
func parseRunID(ctx context.Context, st *history.Store, s string) (int64, error) {
	if s == "last" {
		runs, err := st.List(ctx, history.Filter{Limit: 1})
		if err != nil {
			return 0, err
		}
		if len(runs) == 0 {
			return 0, fmt.Errorf("history show last: %s holds no run", st.Source())
		}
		return runs[0].ID, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("history: RUN %q: want a run id (as list shows it) or last", s)
	}
	return id, nil
}

// importVerdict judges a result file written before: its own verdict
// says whether it measured, its thresholds whether it passed.
func importVerdict(r *result.Result) (string, string) {
	switch {
	case r.Run.Verdict != "":
		return history.VerdictFailed, r.Run.Verdict
	case !r.Run.Complete:
		return history.VerdictFailed, "the run was interrupted"
	case r.Run.Gate != "":
		return history.VerdictGateFailed, r.Run.Gate
	}
	var failed []string
	for _, t := range r.Thresholds {
		if !t.Passed {
			failed = append(failed, t.Expr)
		}
	}
	if len(failed) > 0 {
		return history.VerdictGateFailed, "threshold failed: " + strings.Join(failed, "; ")
	}
	return history.VerdictPassed, ""
}

func historyImport(args []string, stdout, stderr io.Writer) error {
	var h historyFlags
	fs := newHistoryFlags("import", "Usage: llmload history import [flags] RESULT.json...\n\nStores result files written before (run --out, merge --out), each as a run,\njudged as it was: a threshold that failed makes it gate_failed, a run that\nmeasured nothing or was interrupted failed; only passed runs become baselines.\n", stderr)
	h.register(fs, "store the files")
	if err := parseHistoryFlags(fs, "import", args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("history import: expected result files, got none")
	}
	if err := h.parse("history import", os.Getenv); err != nil {
		return err
	}
	if h.dsn == "" {
		return usagef("history import: give --history DSN (or set LLMLOAD_HISTORY)")
	}
	results := make([]*result.Result, fs.NArg())
	for i, p := range fs.Args() {
		r, err := readResult(p)
		if err != nil {
			return err
		}
		if r.Run.Segment != nil {
			return fmt.Errorf("%s: a segment's result is a share of a run: merge the segments (llmload merge --history DSN)", p)
		}
		results[i] = r
	}
	st, err := h.open()
	if err != nil {
		return err
	}
	defer st.Close()
	for i, r := range results {
		verdict, reason := importVerdict(r)
		id, err := st.Save(context.Background(), history.Entry{Result: r, Labels: h.parsed, Verdict: verdict, Reason: reason, Source: "import", Unique: true})
		var dup *history.DuplicateError
		if errors.As(err, &dup) {
			fmt.Fprintf(stdout, "%s: stored already, as run %d: skipped\n", fs.Arg(i), dup.ID)
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(i), err)
		}
		fmt.Fprintf(stdout, "%s: stored as run %d (%s)\n", fs.Arg(i), id, verdict)
	}
	return nil
}

func historyPrune(args []string, stdout, stderr io.Writer) error {
	var dsn, older string
	var keep int
	fs := newHistoryFlags("prune", "Usage: llmload history prune --keep N | --older AGE [flags]\n\nDeletes runs: all but the newest N of each plan, and/or those started more\nthan AGE ago (36h, 7d, 2w).\n", stderr)
	fs.StringVar(&dsn, "history", "", "the history store (default $LLMLOAD_HISTORY)")
	fs.IntVar(&keep, "keep", 0, "keep the newest N runs of each plan")
	fs.StringVar(&older, "older", "", "delete runs started more than this long ago, e.g. 90d")
	if err := parseHistoryFlags(fs, "prune", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history prune: unexpected arguments %v", fs.Args())
	}
	if dsn == "" {
		dsn = os.Getenv("LLMLOAD_HISTORY")
	}
	switch {
	case dsn == "":
		return usagef("history prune: give --history DSN (or set LLMLOAD_HISTORY)")
	case keep < 0:
		return usagef("history prune: --keep %d must be at least 1", keep)
	case fs.Changed("keep") && keep == 0:
		return usagef("history prune: --keep 0 would delete every run; give at least 1")
	case keep == 0 && older == "":
		return usagef("history prune: give --keep N or --older AGE (or both)")
	}
	var before time.Time
	if older != "" {
		d, err := parseAge(older)
		if err != nil {
			return usagef("history prune: --older %v", err)
		}
		before = time.Now().Add(-d)
	}
	if _, err := history.ParseDSN(dsn); err != nil {
		return usagef("history prune: --history: %v", err)
	}
	st, err := openExisting(dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Prune(context.Background(), keep, before)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pruned %s from %s\n", textfmt.Count(n, "run", "runs"), st.Source())
	return nil
}
