package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/luabind/library"
)

const scenariosUsage = `Usage: llmload scenarios [DIR]

Lists the scenarios in DIR (default: scenarios, under the working
directory), one line each: the file, what it measures (its header's first
paragraph) and the --set keys its code reads, with their defaults. Nothing
is run. A file that does not parse is named with its line on standard
error, the others are still listed, and the exit code is 1; so it is when
DIR is missing or holds no *.lua file. A header whose "Keys (--set):"
lines disagree with the code is warned about.
`

// defaultScenarioDir is where the scenario library sits in a checkout.
const defaultScenarioDir = "scenarios"

func scenariosCmd(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("scenarios", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, scenariosUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("scenarios: %v", err)
	}
	if fs.NArg() > 1 {
		return usagef("scenarios: expected at most one DIR, got %s", arguments(fs.NArg()))
	}
	dir := defaultScenarioDir
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	list, err := library.List(dir)
	if err != nil {
		return fmt.Errorf("scenarios: %w", err)
	}
	if err := library.Print(stdout, list); err != nil {
		return err
	}
	failed := 0
	for _, s := range list {
		if s.Err != nil {
			failed++
			fmt.Fprintf(stderr, "llmload: %v\n", s.Err)
		} else if err := s.Mismatch(); err != nil && s.KeysLine > 0 {
			fmt.Fprintf(stderr, "llmload: warning: %v\n", err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("scenarios: %d of %d files in %s could not be read", failed, len(list), dir)
	}
	return nil
}
