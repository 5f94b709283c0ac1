package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/report"
	enginerun "github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/luabind"
)

const checkUsage = `Usage: llmload check [flags] SCENARIO.lua

Validates the scenario and prints its plan — per scenario the executor, a
timeline of stages (VUs or rate), the expected request count, and the
thresholds — without sending anything. Then the lints: good-practice checks
(docs/scenarios.md "Good practice, checked") judged from the plan and from a dry run of
each scenario's iterations, whose requests get canned answers and are never
sent. With --strict a lint warning exits 1.

Flags:
`

func checkCmd(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, checkUsage+fs.FlagUsages()) }
	fs.StringVar(&f.target, "target", "", "base URL the run would use")
	fs.StringVar(&f.model, "model", "", "model the run would use")
	f.reach.register(fs)
	fs.StringArrayVar(&f.sets, "set", nil, "set a script parameter, key=value; repeatable")
	fs.Int64Var(&f.seed, "seed", 0, "run seed")
	maxMemoryFlag(fs, &f.maxMemory)
	fs.BoolVar(&f.strict, "strict", false, strictUsage)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("check: %v", err)
	}
	if fs.NArg() != 1 {
		return usagef("check: expected one SCENARIO.lua, got %s", arguments(fs.NArg()))
	}
	if err := f.reach.parse("check"); err != nil {
		return err
	}
	params, err := parseSets(f.sets)
	if err != nil {
		return err
	}
	mem, err := watchMemory(f.maxMemory)
	if err != nil {
		return err
	}
	defer mem.Stop()
	script, err := luabind.Compile(fs.Arg(0), luabind.Options{Params: params, Seed: f.seed, Stop: mem.Context()})
	if err != nil {
		return enginerun.MemoryError(mem, err)
	}
	p := script.Plan()
	p.Target = resolveTarget(p.Target, &f, os.LookupEnv)
	if err := f.reach.applyPlan("check", &p); err != nil {
		return err
	}
	set, err := enginerun.ParseThresholds(p)
	if err != nil {
		return err
	}
	lines := make([]string, len(set))
	for i, t := range set {
		lines[i] = t.String()
	}
	if err := report.Plan(p, lines, script.Traces())(stdout); err != nil {
		return err
	}
	if ratio, kinds := script.Dirty(); ratio > 0 {
		fmt.Fprintf(stdout, "dirty data: %s of requests replaced by malformed variants: %s\n",
			strconv.FormatFloat(100*ratio, 'g', 4, 64)+"%", dirtyKinds(kinds))
	}
	dry, err := dryRun(mem.Context(), script, p)
	if err != nil {
		return enginerun.MemoryError(mem, err)
	}
	_, lints := planLints(dry, script, p, set, nil)
	if err := printLints(stdout, lints); err != nil {
		return err
	}
	if err := writeSpendPlan(stdout, dry.Requests, p); err != nil {
		return err
	}
	return strictError(f.strict, lints)
}

// dirtyKinds lists kinds with their weights, sorted by name.
func dirtyKinds(kinds map[string]float64) string {
	names := slices.Sorted(maps.Keys(kinds))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s×%g", n, kinds[n])
	}
	return strings.Join(parts, ", ")
}
