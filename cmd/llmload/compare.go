package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/compare"
	"github.com/llmload/llmload/engine/report"
	"github.com/llmload/llmload/engine/result"
)

const compareUsage = `Usage: llmload compare [flags] BASE.json NEW.json
       llmload compare [flags] --targets A,B RESULT.json

Compares two result files stage by stage (matched by name): each metric side by
side with its change in %, and a verdict from an exact test on the files' data
(HDR histograms, request and error counts) that holds at any sample count:
REGRESSION, worse, better, same, or inconclusive when the data cannot decide.
Capacity searches (executor = "capacity") are compared on the capacity each
found, within its interval, not probe by probe. Exits 99 when a metric got
significantly worse by more than --max-regression, when a capacity dropped by
more than --max-capacity-drop, or, with --inconclusive fail, when any
comparison is inconclusive. With --targets, the two sides are two targets of
one run (options.targets): target A is the base, B the new.

Flags:
`

// gateFlags are the regression-gate flags shared by compare and run --baseline.
type gateFlags struct {
	maxRegression   string
	maxCapacityDrop string
	metrics         []string
	format          string
	inconclusive    string // "pass" or "fail"
}

func (g *gateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.maxRegression, "max-regression", "20%", "largest tolerated significant worsening, e.g. 20% or 0.2")
	fs.StringVar(&g.maxCapacityDrop, "max-capacity-drop", "10%", "largest tolerated drop of a capacity search's result, e.g. 10% or 0.1")
	fs.StringSliceVar(&g.metrics, "metrics", nil, "metrics to gate on (default "+strings.Join(compare.DefaultMetrics, ",")+")")
	fs.StringVar(&g.format, "format", "text", "output: text, json or md")
	fs.StringVar(&g.inconclusive, "inconclusive", "pass", "when the data cannot decide a comparison: pass (with a ⚠ headline) or fail (exit 99)")
}

// options validates the flags into compare options.
func (g *gateFlags) options() (compare.Options, error) {
	v, err := parseShare("max-regression", &g.maxRegression, "20%")
	if err != nil {
		return compare.Options{}, err
	}
	drop, err := parseShare("max-capacity-drop", &g.maxCapacityDrop, "10%")
	if err != nil {
		return compare.Options{}, err
	}
	if drop >= 1 {
		return compare.Options{}, usagef("--max-capacity-drop %s: a drop of all the capacity or more can never be seen", g.maxCapacityDrop)
	}
	valid := compare.ValidMetrics()
	for _, m := range g.metrics {
		if !slices.Contains(valid, m) {
			return compare.Options{}, usagef("--metrics: unknown metric %q (valid: %s)", m, strings.Join(valid, ", "))
		}
	}
	switch g.format {
	case "text", "json", "md":
	default:
		return compare.Options{}, usagef("--format %q: want text, json or md", g.format)
	}
	switch g.inconclusive {
	case "pass", "fail":
	default:
		return compare.Options{}, usagef("--inconclusive %q: want pass or fail", g.inconclusive)
	}
	return compare.Options{MaxRegression: v, MaxCapacityDrop: drop, Metrics: g.metrics}, nil
}

// parseShare reads a percentage ("20%") or a fraction ("0.2") flag and
// rewrites it as a percentage for messages.
func parseShare(name string, flag *string, example string) (float64, error) {
	s := strings.TrimSpace(*flag)
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	switch {
	case err != nil || v < 0:
		return 0, usagef("--%s %q: want a percentage such as %s", name, *flag, example)
	case pct:
		v /= 100
	case v > 1:
		// "20" is far more likely to mean 20% than 2000%: refuse to guess.
		return 0, usagef("--%s %q: write a percentage (%s%%) or a fraction (%g)", name, *flag, s, v/100)
	}
	*flag = strconv.FormatFloat(100*v, 'g', 4, 64) + "%"
	return v, nil
}

// reporter renders a comparison in the chosen format.
func (g *gateFlags) reporter(r *compare.Result) report.Reporter {
	switch g.format {
	case "json":
		return compare.JSON(r)
	case "md":
		return compare.Markdown(r)
	}
	return compare.Text(r)
}

func compareCmd(args []string, stdout, stderr io.Writer) error {
	var g gateFlags
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, compareUsage+fs.FlagUsages()) }
	g.register(fs)
	targets := fs.StringSlice("targets", nil, "compare two targets of one result: BASE,NEW (names of options.targets)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("compare: %v", err)
	}
	if fs.Changed("targets") {
		return compareTargets(fs, *targets, &g, stdout)
	}
	if fs.NArg() != 2 {
		return usagef("compare: expected BASE.json and NEW.json, got %s", arguments(fs.NArg()))
	}
	opts, err := g.options()
	if err != nil {
		return err
	}
	base, err := readResult(fs.Arg(0))
	if err != nil {
		return err
	}
	next, err := readResult(fs.Arg(1))
	if err != nil {
		return err
	}
	return gate(base, next, fs.Arg(0), fs.Arg(1), opts, &g, stdout)
}

// compareTargets compares two targets of one result file.
func compareTargets(fs *pflag.FlagSet, targets []string, g *gateFlags, stdout io.Writer) error {
	if len(targets) != 2 || targets[0] == "" || targets[1] == "" {
		return usagef("compare: --targets wants two target names, BASE,NEW (got %q)", strings.Join(targets, ","))
	}
	if targets[0] == targets[1] {
		return usagef("compare: --targets %s,%s names one target twice", targets[0], targets[1])
	}
	if fs.NArg() != 1 {
		return usagef("compare: --targets compares two targets of one RESULT.json, got %s", arguments(fs.NArg()))
	}
	opts, err := g.options()
	if err != nil {
		return err
	}
	res, err := readResult(fs.Arg(0))
	if err != nil {
		return err
	}
	var sides [2]*result.Result
	for i, name := range targets {
		if sides[i], err = res.ForTarget(name); err != nil {
			return fmt.Errorf("%s: --targets: %w", fs.Arg(0), err)
		}
	}
	return gate(sides[0], sides[1], fs.Arg(0)+" target "+targets[0], fs.Arg(0)+" target "+targets[1], opts, g, stdout)
}

// gate compares and renders; regressions beyond the bound exit 99, and
// so do inconclusive comparisons with --inconclusive fail.
func gate(base, next *result.Result, baseName, nextName string, opts compare.Options, g *gateFlags, w io.Writer) error {
	r, err := compare.Compare(base, next, opts)
	if err != nil {
		return fmt.Errorf("compare %s with %s: %w", baseName, nextName, err)
	}
	r.Base, r.New = baseName, nextName
	if err := g.reporter(r)(w); err != nil {
		return err
	}
	var failed []string
	if r.Regressions > 0 {
		failed = append(failed, fmt.Sprintf("%s beyond %s", gateCount(r.Regressions, "significant regression"), g.maxRegression))
	}
	if r.CapacityRegressions > 0 {
		failed = append(failed, fmt.Sprintf("%s beyond %s (%s)", gateCount(r.CapacityRegressions, "capacity drop"), g.maxCapacityDrop, droppedScenarios(r)))
	}
	if n := r.Inconclusive + r.CapacityInconclusive; n > 0 && g.inconclusive == "fail" {
		failed = append(failed, fmt.Sprintf("%s inconclusive (--inconclusive fail)", gateCount(n, "comparison")))
	}
	if len(failed) > 0 {
		return &gateError{strings.Join(failed, ", ") + " against " + baseName}
	}
	return nil
}

// droppedScenarios names the capacity searches that regressed.
func droppedScenarios(r *compare.Result) string {
	var names []string
	for _, row := range r.Capacity {
		if row.Regression {
			names = append(names, row.Scenario)
		}
	}
	return strings.Join(names, ", ")
}

// gateCount renders n with its noun: "1 stage", "2 stages".
func gateCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
