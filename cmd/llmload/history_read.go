package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/compare"
	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
	enginerun "github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/textfmt"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func historyShow(args []string, stdout, stderr io.Writer) error {
	var dsn, format string
	fs := newHistoryFlags("show", "Usage: llmload history show [flags] RUN\n\nPrints one stored run (RUN: its id, or last): its metadata, labels and summary,\nor with --format json its whole result, as run --out wrote it.\n", stderr)
	fs.StringVar(&dsn, "history", "", "the history store (default $LLMLOAD_HISTORY)")
	fs.StringVar(&format, "format", "text", "text or json")
	if err := parseHistoryFlags(fs, "show", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("history show: expected one RUN, got %s", arguments(fs.NArg()))
	}
	if format != "text" && format != "json" {
		return usagef("history show: --format %q: want text or json", format)
	}
	sel := selectFlags{dsn: dsn}
	if err := sel.parse("show", time.Now()); err != nil {
		return err
	}
	st, err := sel.open()
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	id, err := parseRunID(ctx, st, fs.Arg(0))
	if err != nil {
		return err
	}
	run, res, err := st.Get(ctx, id)
	if err != nil {
		return err
	}
	if format == "json" {
		return report.JSON(res)(stdout)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, row := range [][2]string{
		{"run", strconv.FormatInt(run.ID, 10)},
		{"started", run.Start.UTC().Format(time.RFC3339) + " (stored " + run.Stored.UTC().Format(time.RFC3339) + ")"},
		{"scenario", run.Scenario},
		{"plan", orDash(run.Fingerprint)},
		{"target", orDash(run.Target)},
		{"model", orDash(run.Model)},
		{"seed", strconv.FormatInt(run.Seed, 10)},
		{"verdict", strings.TrimSpace(verdictText(run) + " " + run.Reason)},
		{"labels", orDash(history.FormatLabels(run.Labels))},
		{"stored by", run.Source + ", llmload " + run.Version},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return report.Text(res)(stdout)
}

// planSeries reads the measured runs sel selects of one plan — the one
// --plan names, else the newest run's — oldest first, with a line saying
// what was read.
func planSeries(ctx context.Context, st *history.Store, sel *selectFlags) ([]history.Run, []*result.Result, string, error) {
	f := sel.filter
	f.Measured = true
	if f.Fingerprint == "" {
		newest := f
		newest.Limit = 1
		runs, err := st.List(ctx, newest)
		if err != nil {
			return nil, nil, "", err
		}
		if len(runs) == 0 {
			return nil, nil, "", fmt.Errorf("history: %s holds no measured run that matches%s", st.Source(), filterNote(sel))
		}
		f.Fingerprint = runs[0].Fingerprint
	}
	runs, results, err := st.Results(ctx, f)
	if err != nil {
		return nil, nil, "", err
	}
	if len(runs) == 0 {
		return nil, nil, "", fmt.Errorf("history: %s holds no measured run of plan %s that matches%s", st.Source(), short(f.Fingerprint), filterNote(sel))
	}
	others := ""
	if sel.filter.Fingerprint == "" {
		all := sel.filter
		all.Limit = 0
		all.Measured = true
		every, err := st.List(ctx, all)
		if err != nil {
			return nil, nil, "", err
		}
		plans := map[string]bool{}
		for _, r := range every {
			plans[r.Fingerprint] = true
		}
		if n := len(plans) - 1; n > 0 {
			others = fmt.Sprintf("; %s match too: --plan picks one (list --format json shows them)", textfmt.Count(int64(n), "other plan", "other plans"))
		}
	}
	head := fmt.Sprintf("%s of plan %s (%s), %s → %s, in %s%s", textfmt.Count(int64(len(runs)), "run", "runs"), short(f.Fingerprint), runs[0].Scenario,
		runs[len(runs)-1].Start.UTC().Format("2006-01-02"), runs[0].Start.UTC().Format("2006-01-02"), st.Source(), others)
	return runs, results, head, nil
}

// filterNote says which filters applied, for "no run matches".
func filterNote(sel *selectFlags) string {
	var parts []string
	f := sel.filter
	if f.Scenario != "" {
		parts = append(parts, "scenario "+f.Scenario)
	}
	if f.Target != "" {
		parts = append(parts, "target "+f.Target)
	}
	if f.Fingerprint != "" {
		parts = append(parts, "plan "+f.Fingerprint)
	}
	if len(f.Labels) > 0 {
		parts = append(parts, "labels "+history.FormatLabels(f.Labels))
	}
	if sel.since != "" {
		parts = append(parts, "since "+sel.since)
	}
	if sel.until != "" {
		parts = append(parts, "until "+sel.until)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// checkMetrics validates --metrics for trend, check and report.
func checkMetrics(cmd string, list []string) ([]string, error) {
	if len(list) == 0 {
		return compare.DefaultMetrics, nil
	}
	valid := compare.ValidMetrics()
	for _, m := range list {
		if !slices.Contains(valid, m) {
			return nil, usagef("history %s: unknown metric %q (valid: %s)", cmd, m, strings.Join(valid, ", "))
		}
	}
	return list, nil
}

// seriesOf reads each metric's series; a --stage that no run has is an
// error naming the stages there are.
func seriesOf(runs []history.Run, results []*result.Result, metrics []string, stage string) ([]history.Series, error) {
	var all []history.Series
	for _, m := range metrics {
		s, err := history.Trend(runs, results, m, stage)
		if err != nil {
			return nil, usagef("history: %v", err)
		}
		all = append(all, s...)
	}
	if stage != "" && len(all) == 0 {
		return nil, usagef("history: --stage %q: no run has it (stages: %s)", stage, strings.Join(history.Stages(results), ", "))
	}
	return all, nil
}

func historyTrend(args []string, stdout, stderr io.Writer) error {
	var sel selectFlags
	var stage string
	fs := newHistoryFlags("trend", "Usage: llmload history trend [flags] METRIC\n\nPrints one metric ("+strings.Join(compare.DefaultMetrics, ", ")+", …) of each stage across the\nruns of one plan, oldest first: a sparkline, then each run's value with its 95% interval.\n", stderr)
	sel.register(fs, 30)
	fs.StringVar(&stage, "stage", "", "only this stage: scenario/stage, or a stage name one scenario has")
	if err := parseHistoryFlags(fs, "trend", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("history trend: expected one METRIC, got %s", arguments(fs.NArg()))
	}
	metrics, err := checkMetrics("trend", []string{fs.Arg(0)})
	if err != nil {
		return err
	}
	if err := sel.parse("trend", time.Now()); err != nil {
		return err
	}
	st, err := sel.open()
	if err != nil {
		return err
	}
	defer st.Close()
	runs, results, head, err := planSeries(context.Background(), st, &sel)
	if err != nil {
		return err
	}
	series, err := seriesOf(runs, results, metrics, stage)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, head)
	for _, s := range series {
		fmt.Fprintf(stdout, "\n%s of %s (%s), %s with a value\n", s.Metric, s.Stage, s.Unit, textfmt.Count(int64(len(s.Points)), "run", "runs"))
		if len(s.Points) == 0 {
			continue
		}
		vals := make([]float64, len(s.Points))
		for i, p := range s.Points {
			vals[i] = p.Figure.Value
		}
		lo, hi := slices.Min(vals), slices.Max(vals)
		fmt.Fprintf(stdout, "  %s  min %s  max %s\n", sparkline(vals), fig(lo), fig(hi))
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "RUN\tSTARTED (UTC)\tVALUE\t95% INTERVAL\tCOMMIT\t")
		for _, p := range s.Points {
			iv := "-"
			if !math.IsNaN(p.Figure.Lo) {
				iv = fig(p.Figure.Lo) + "–" + fig(p.Figure.Hi)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t\n", p.Run.ID, p.Run.Start.UTC().Format("2006-01-02 15:04"), fig(p.Figure.Value), iv, orDash(shortCommit(p.Run.Labels["commit"])))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// sparkline draws values as block characters, lowest to highest.
func sparkline(vals []float64) string {
	const bars = "▁▂▃▄▅▆▇█"
	blocks := []rune(bars)
	lo, hi := slices.Min(vals), slices.Max(vals)
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(blocks)-1)))
		}
		b.WriteRune(blocks[i])
	}
	return b.String()
}

// fig prints a figure with 4 significant digits.
func fig(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func shortCommit(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

// checked is what history check and report read: the runs of one plan
// (newest first) and the line naming them, each metric's series, and the
// shifts the change-point check found in them.
type checked struct {
	runs    []history.Run
	head    string
	metrics []string
	series  []history.Series
	shifts  []history.Shift
	short   int // series too short to check
	opts    history.CheckOptions
}

// readChecked validates sel and cf, reads the runs and checks them.
func readChecked(cmd string, sel *selectFlags, cf *checkFlags) (*checked, error) {
	metrics, opts, err := cf.options(cmd)
	if err != nil {
		return nil, err
	}
	if err := sel.parse(cmd, time.Now()); err != nil {
		return nil, err
	}
	st, err := sel.open()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	runs, results, head, err := planSeries(context.Background(), st, sel)
	if err != nil {
		return nil, err
	}
	series, err := seriesOf(runs, results, metrics, cf.stage)
	if err != nil {
		return nil, err
	}
	shifts, short, err := history.Check(series, opts)
	if err != nil {
		return nil, err
	}
	return &checked{runs: runs, head: head, metrics: metrics, series: series, shifts: shifts, short: short, opts: opts}, nil
}

// checkFlags are history check's and report's change-point options.
type checkFlags struct {
	metrics   []string
	stage     string
	minChange string
	alpha     float64
	minRuns   int
}

func (c *checkFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.metrics, "metrics", nil, "metrics to check (default "+strings.Join(compare.DefaultMetrics, ",")+")")
	fs.StringVar(&c.stage, "stage", "", "only this stage: scenario/stage, or a stage name one scenario has")
	fs.StringVar(&c.minChange, "min-change", "2%", "smallest shift of a metric's mean that counts, e.g. 2% or 0.02")
	fs.Float64Var(&c.alpha, "alpha", history.DefaultCheckAlpha, "chance of naming a shift in a history that has none, for all the metrics and stages together")
	fs.IntVar(&c.minRuns, "min-runs", history.DefaultMinRuns, "fewest runs on each side of a shift: a shift must last this long to count")
}

func (c *checkFlags) options(cmd string) ([]string, history.CheckOptions, error) {
	metrics, err := checkMetrics(cmd, c.metrics)
	if err != nil {
		return nil, history.CheckOptions{}, err
	}
	minChange, err := parseShare("min-change", &c.minChange, "2%")
	if err != nil {
		return nil, history.CheckOptions{}, err
	}
	switch {
	case c.alpha <= 0 || c.alpha >= 1:
		return nil, history.CheckOptions{}, usagef("history %s: --alpha %g: want a value between 0 and 1, e.g. 0.01", cmd, c.alpha)
	case c.minRuns < 1:
		return nil, history.CheckOptions{}, usagef("history %s: --min-runs %d: want at least 1", cmd, c.minRuns)
	}
	return metrics, history.CheckOptions{Alpha: c.alpha, MinChange: minChange, MinRuns: c.minRuns, Seed: 1}, nil
}

func historyCheck(args []string, stdout, stderr io.Writer) error {
	var sel selectFlags
	var cf checkFlags
	fs := newHistoryFlags("check", `Usage: llmload history check [flags]

Looks for sustained shifts in the last runs of one plan (--limit, default 30):
for each metric and stage, E-Divisive means (Matteson & James 2014, as MongoDB's
CI and Apache Otava use it) with a permutation test finds the change points.
Exits 99 naming the first run after each shift for the worse, 0 when there is
none. A shift needs --min-runs runs on each side, so one noisy run never counts;
--alpha is the chance of a false alarm for the whole check.
`, stderr)
	sel.register(fs, 30)
	cf.register(fs)
	if err := parseHistoryFlags(fs, "check", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history check: unexpected arguments %v", fs.Args())
	}
	c, err := readChecked("check", &sel, &cf)
	if err != nil {
		return err
	}
	runs, head, metrics, series, shifts, short, opts := c.runs, c.head, c.metrics, c.series, c.shifts, c.short, c.opts
	fmt.Fprintf(stdout, "history check: %s\n%d series (%s), alpha %g for them all, min change %s, at least %d runs each side\n\n",
		head, len(series), strings.Join(metrics, ", "), opts.Alpha, cf.minChange, opts.MinRuns)
	var worse []string
	for _, s := range shifts {
		word := "better"
		if s.Worse {
			word = "REGRESSION"
			worse = append(worse, fmt.Sprintf("%s of %s shifted %+.1f%% from run %d", s.Series.Metric, s.Series.Stage, 100*s.RelChange, s.FirstRun().ID))
		}
		fmt.Fprintf(stdout, "%-10s %s of %s: %s since run %d (%s%s): %s %s before → %s %s after (p=%.2g)\n",
			word, s.Series.Metric, s.Series.Stage, pctText(s.RelChange), s.FirstRun().ID,
			s.FirstRun().Start.UTC().Format("2006-01-02 15:04"), commitNote(s.FirstRun()),
			fig(s.Before), s.Series.Unit, fig(s.After), s.Series.Unit, s.P)
	}
	if len(shifts) == 0 {
		fmt.Fprintln(stdout, "no sustained shift")
	}
	if short > 0 {
		fmt.Fprintf(stdout, "%d series had fewer than %d runs with a value: not checked\n", short, 2*opts.MinRuns)
	}
	if note := shortNote(len(runs), len(series)-short, opts); note != "" {
		fmt.Fprintln(stdout, note)
	}
	if len(worse) > 0 {
		return &gateError{"history check: " + strings.Join(worse, "; ")}
	}
	return nil
}

func pctText(r float64) string {
	if math.IsInf(r, 0) {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*r)
}

func commitNote(r history.Run) string {
	if c := r.Labels["commit"]; c != "" {
		return ", commit " + shortCommit(c)
	}
	return ""
}

func historyReport(args []string, stdout, stderr io.Writer) error {
	var sel selectFlags
	var cf checkFlags
	var out string
	fs := newHistoryFlags("report", "Usage: llmload history report --html FILE [flags]\n\nWrites a self-contained HTML page: for each metric and stage, the last runs of one\nplan as dots with their 95% intervals, and the change points history check finds.\n", stderr)
	sel.register(fs, 30)
	cf.register(fs)
	fs.StringVar(&out, "html", "", "write the report to this file")
	if err := parseHistoryFlags(fs, "report", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history report: unexpected arguments %v", fs.Args())
	}
	if out == "" {
		return usagef("history report: give --html FILE")
	}
	if err := checkOutputs(out); err != nil {
		return err
	}
	c, err := readChecked("report", &sel, &cf)
	if err != nil {
		return err
	}
	runs, head, series, shifts, short, opts := c.runs, c.head, c.series, c.shifts, c.short, c.opts
	page := report.TrendPage{Title: "llmload history — " + runs[0].Scenario, Generated: time.Now(), Filters: []string{head}}
	if note := shortNote(len(runs), len(series)-short, opts); note != "" {
		page.Filters = append(page.Filters, note)
	}
	if f := filterNote(&sel); f != "" {
		page.Filters = append(page.Filters, strings.Trim(f, " ()"))
	}
	for i := range series {
		s := &series[i]
		c := report.TrendChart{Metric: s.Metric, Stage: s.Stage, Unit: s.Unit, HigherBad: s.HigherBad}
		for _, p := range s.Points {
			c.Runs = append(c.Runs, report.TrendRun{ID: strconv.FormatInt(p.Run.ID, 10), Time: p.Run.Start, Label: shortCommit(p.Run.Labels["commit"]),
				Value: p.Figure.Value, Lo: p.Figure.Lo, Hi: p.Figure.Hi})
		}
		for _, sh := range shifts {
			if sh.Series == s {
				c.Changes = append(c.Changes, report.TrendChange{Index: sh.First, Before: sh.Before, After: sh.After, RelChange: sh.RelChange, Worse: sh.Worse})
			}
		}
		if len(s.Points) < 2*opts.MinRuns {
			c.Note = fmt.Sprintf("fewer than %d runs: no change-point check", 2*opts.MinRuns)
		}
		page.Charts = append(page.Charts, c)
	}
	if err := enginerun.WriteFile(out, report.TrendHTML(page)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s over %s\n", out, textfmt.Count(int64(len(page.Charts)), "chart", "charts"), head)
	return nil
}

func historyExport(args []string, stdout, stderr io.Writer) error {
	var sel selectFlags
	var format, out string
	fs := newHistoryFlags("export", "Usage: llmload history export [flags]\n\nWrites the runs sel selects, newest first: --format csv one row per run and\nstage (the stage rows' figures), --format jsonl one line per run with its\nmetadata, labels and whole result.\n", stderr)
	sel.register(fs, 0)
	fs.StringVar(&format, "format", "csv", "csv or jsonl")
	fs.StringVar(&out, "out", "", "write to this file (default standard output)")
	if err := parseHistoryFlags(fs, "export", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("history export: unexpected arguments %v", fs.Args())
	}
	if format != "csv" && format != "jsonl" {
		return usagef("history export: --format %q: want csv or jsonl", format)
	}
	if err := sel.parse("export", time.Now()); err != nil {
		return err
	}
	if err := checkOutputs(out); err != nil {
		return err
	}
	st, err := sel.open()
	if err != nil {
		return err
	}
	defer st.Close()
	runs, results, err := st.Results(context.Background(), sel.filter)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		if format == "jsonl" {
			enc := json.NewEncoder(w)
			for i, r := range runs {
				j := toJSON(r)
				j.Result = results[i]
				if err := enc.Encode(j); err != nil {
					return err
				}
			}
			return nil
		}
		return exportCSV(w, runs, results)
	}
	if out == "" {
		return write(stdout)
	}
	return enginerun.WriteFile(out, write)
}

// exportColumns are the CSV's figures after the run's and stage's
// identity: each metric's value as FigureOf reads it.
var exportColumns = []string{"req_per_sec", "output_tok_per_sec", "goodput", "errors.rate",
	"ttft.p50", "ttft.p90", "ttft.p99", "tpot.p50", "tpot.p99", "itl.p50", "itl.p99", "e2e.p50", "e2e.p90", "e2e.p99"}

func exportCSV(w io.Writer, runs []history.Run, results []*result.Result) error {
	cw := csv.NewWriter(w)
	head := []string{"run", "started_at", "scenario", "plan", "target", "model", "verdict", "complete", "labels",
		"stage", "vus", "requests", "ok", "failed", "duration_s"}
	for _, c := range exportColumns {
		name := strings.ReplaceAll(c, ".", "_")
		if name == "errors_rate" {
			name = "error_pct"
		} else if strings.Contains(c, ".p") {
			name += "_ms"
		}
		head = append(head, name)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, r := range runs {
		res := results[i]
		for j := range res.Stages {
			stg := &res.Stages[j]
			row := []string{strconv.FormatInt(r.ID, 10), r.Start.UTC().Format(time.RFC3339Nano), cell(r.Scenario), r.Fingerprint,
				cell(r.Target), cell(r.Model), r.Verdict, strconv.FormatBool(r.Complete), cell(history.FormatLabels(r.Labels)),
				cell(stg.Scenario + "/" + stg.Stage), strconv.Itoa(stg.VUs), strconv.FormatInt(stg.Requests, 10),
				strconv.FormatInt(stg.OK, 10), strconv.FormatInt(stg.Failed, 10), strconv.FormatFloat(stg.DurationS, 'f', -1, 64)}
			for _, c := range exportColumns {
				f, err := compare.FigureOf(c, stg, res)
				if err != nil {
					return fmt.Errorf("run %d: %w", r.ID, err)
				}
				v := ""
				if f.OK {
					v = strconv.FormatFloat(f.Value, 'f', -1, 64)
				}
				row = append(row, v)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// cell keeps a user's text from being read as a formula by a
// spreadsheet that opens the CSV.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// shortNote says when n runs are too few for the check to name a shift
// of MinRuns runs among k series (see history.Confirming); "" when they
// are enough.
func shortNote(n, k int, opts history.CheckOptions) string {
	if k <= 0 {
		return ""
	}
	switch c := history.Confirming(n, opts.MinRuns, opts.Alpha/float64(k)); {
	case c > n-opts.MinRuns:
		return fmt.Sprintf("with %d runs, no shift can reach alpha %g yet: the check needs more history", n, opts.Alpha)
	case c > opts.MinRuns:
		return fmt.Sprintf("with %d runs, a shift can be named only once it has lasted %d runs (more history lets %d do)", n, c, opts.MinRuns)
	}
	return ""
}
