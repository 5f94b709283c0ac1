// Command llmload is a load generator for LLM inference services: it runs a
// Lua scenario against an OpenAI-compatible endpoint (or its built-in
// simulator) and reports per-stage TTFT, TPOT, ITL and E2E percentiles.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/llmload/llmload/luabind"
)

// Exit codes, as DESIGN.md names them. When several apply, the first of
// these wins: usage (2, before anything runs), an error or a run that
// measured nothing or lost its target (1), a failed threshold or baseline
// gate (99).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitThreshold: the run finished but a threshold failed.
	exitThreshold = 99
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// usageError is a command-line mistake: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp means --help was asked for and printed: exit 0.
var errHelp = errors.New("help requested")

const topUsage = `llmload — load generator for LLM inference services

Usage:
  llmload run [flags] SCENARIO.lua   run a scenario (built-in simulator when no target is set)
  llmload check [flags] SCENARIO.lua validate a scenario and print its plan; sends nothing
  llmload scenarios [DIR]            list the scenarios in DIR (default scenarios) and the --set keys each reads
  llmload report [flags] RESULT.json render a result file (text, --html, --csv-stages)
  llmload compare BASE.json NEW.json compare two results; exit 99 on a significant regression
  llmload merge SEGMENT.json...      join a plan's segment results (run --segment i/n) exactly
  llmload history COMMAND            the run history (--history): list, show, trend, check, report, export, import, prune
  llmload k8s [flags] SCENARIO.lua   print Kubernetes manifests that run it as N segments and merge them
  llmload mock [flags]               serve the built-in simulator
  llmload version                    print the version

Run 'llmload COMMAND --help' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a subcommand and maps its error to an exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		err = runCmd(args[1:], stdout, stderr)
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "compare":
		err = compareCmd(args[1:], stdout, stderr)
	case "merge":
		err = mergeCmd(args[1:], stdout, stderr)
	case "history":
		err = historyCmd(args[1:], stdout, stderr)
	case "check":
		err = checkCmd(args[1:], stdout, stderr)
	case "scenarios":
		err = scenariosCmd(args[1:], stdout, stderr)
	case "k8s":
		err = k8sCmd(args[1:], stdout, stderr)
	case "mock":
		err = mockCmd(args[1:], stdout, stderr)
	case "version", "--version":
		err = versionCmd(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
	default:
		err = usagef("unknown command %q", args[0])
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var te *gateError
	var pe *luabind.ParamError // a --set key the script never reads
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue), errors.As(err, &pe):
		fmt.Fprintf(stderr, "llmload: %v\n\n%s", err, topUsageShort)
		return exitUsage
	case errors.As(err, &te):
		fmt.Fprintf(stderr, "llmload: %v\n", err)
		return exitThreshold
	default:
		fmt.Fprintf(stderr, "llmload: %v\n", err)
		return exitError
	}
}

const topUsageShort = "Run 'llmload --help' for usage.\n"

func versionCmd(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(stdout, "Usage: llmload version\n\nPrints llmload's version.\n")
		return nil
	}
	if len(args) > 0 {
		return usagef("version: unexpected arguments %v", args)
	}
	fmt.Fprintf(stdout, "llmload %s\n", version)
	return nil
}

// gateError means the run completed but a gate failed — a threshold, or a
// significant regression against a baseline: exit code 99.
type gateError struct{ msg string }

func (e *gateError) Error() string { return e.msg }
