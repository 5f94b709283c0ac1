package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/result"
	enginerun "github.com/llmload/llmload/engine/run"
)

// historyFlags are the flags that store a run in the history, shared by
// run, merge and history import.
type historyFlags struct {
	dsn     string
	fromEnv bool // dsn is LLMLOAD_HISTORY's, not the flag's
	labels  []string
	parsed  map[string]string // the user's labels
}

func (h *historyFlags) register(fs *pflag.FlagSet, verb string) {
	fs.StringVar(&h.dsn, "history", "", verb+" in this history store: sqlite:FILE or postgres://USER@HOST/DB\n(default $LLMLOAD_HISTORY; see docs/history.md)")
	fs.StringArrayVar(&h.labels, "label", nil, "with --history: label the stored run, key=value (repeatable); CI labels\n(commit, branch, job, ci_run) come from GitHub Actions', GitLab CI's and Buildkite's variables")
}

// parse reads the flags and the environment; cmd names the command for
// errors.
func (h *historyFlags) parse(cmd string, getenv func(string) string) error {
	if h.dsn == "" {
		h.dsn = getenv("LLMLOAD_HISTORY")
		h.fromEnv = h.dsn != ""
	}
	labels, err := history.ParseLabels("--label", h.labels)
	if err != nil {
		return usagef("%s: %v", cmd, err)
	}
	h.parsed = labels
	if h.dsn == "" {
		if len(h.labels) > 0 {
			return usagef("%s: --label has no effect without --history DSN (or LLMLOAD_HISTORY)", cmd)
		}
		return nil
	}
	if _, err := history.ParseDSN(h.dsn); err != nil {
		return usagef("%s: --history: %v", cmd, err)
	}
	return nil
}

// openTimeout bounds connecting to a store: a PostgreSQL behind a dead
// route must not hold a CI job.
const openTimeout = 30 * time.Second

// open opens the store the flags name; nil without one.
func (h *historyFlags) open() (*history.Store, error) {
	if h.dsn == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return history.OpenDSN(ctx, h.dsn)
}

// verdictOf names how a run ended, for the store.
func verdictOf(out enginerun.Outcome, err error) (string, string) {
	switch {
	case err != nil:
		return history.VerdictFailed, err.Error()
	case out.Verdict == enginerun.GateFailed:
		return history.VerdictGateFailed, out.Reason
	case out.Verdict == enginerun.Failed:
		return history.VerdictFailed, out.Reason
	}
	return history.VerdictPassed, ""
}

// store saves res in st and says so on w. When it cannot, and the
// result went to no file, it is written to a file of its own so that the
// run is never lost, and the error names that file.
func store(st *history.Store, e history.Entry, outFile string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*history.DefaultBusyTimeout)
	defer cancel()
	id, err := st.Save(ctx, e)
	if err == nil {
		fmt.Fprintf(w, "history: stored as run %d in %s\n", id, st.Source())
		return nil
	}
	var dup *history.DuplicateError
	if errors.As(err, &dup) {
		fmt.Fprintf(w, "history: stored already, as run %d in %s: not stored again\n", dup.ID, st.Source())
		return nil
	}
	if outFile != "" && outFile != "-" {
		return fmt.Errorf("%w; the result is in %s (llmload history import %s stores it later)", err, outFile, outFile)
	}
	kept, werr := keepResult(e.Result)
	if werr != nil {
		return errors.Join(err, fmt.Errorf("and the result could not be kept in a file either: %w", werr))
	}
	return fmt.Errorf("%w; the result was kept in %s (llmload history import %s stores it later)", err, kept, kept)
}

// keepResult writes a result the store refused to a new file in the
// working directory, else the temporary one.
func keepResult(r *result.Result) (string, error) {
	name := "llmload-result-" + time.Now().UTC().Format("20060102T150405Z") + ".json"
	var firstErr error
	for _, dir := range []string{".", os.TempDir()} {
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		err = result.WriteJSON(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		return path, nil
	}
	return "", firstErr
}
