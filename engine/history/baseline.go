package history

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/result"
)

// MaxPool bounds history:median:N: a pool of years of runs would judge
// today's run against a server that no longer exists.
const MaxPool = 1000

// BaselineSpec is a --baseline history:… value: the newest Runs runs
// pooled (1 for history:last).
type BaselineSpec struct {
	Runs int
}

// String is the spec as the user writes it.
func (b BaselineSpec) String() string {
	if b.Runs == 1 {
		return "history:last"
	}
	return fmt.Sprintf("history:median:%d", b.Runs)
}

// IsBaselineSpec reports whether a --baseline value names the history
// rather than a file.
func IsBaselineSpec(s string) bool { return strings.HasPrefix(s, "history:") }

// ParseBaseline reads history:last or history:median:N.
func ParseBaseline(s string) (BaselineSpec, error) {
	rest, ok := strings.CutPrefix(s, "history:")
	if !ok {
		return BaselineSpec{}, fmt.Errorf("--baseline %q: not a history baseline", s)
	}
	if rest == "last" {
		return BaselineSpec{Runs: 1}, nil
	}
	if n, ok := strings.CutPrefix(rest, "median:"); ok {
		v, err := strconv.Atoi(n)
		switch {
		case err != nil:
			return BaselineSpec{}, fmt.Errorf("--baseline %q: N must be a whole number of runs, e.g. history:median:10", s)
		case v < 1:
			return BaselineSpec{}, fmt.Errorf("--baseline %q: N must be at least 1 (history:median:1 is history:last)", s)
		case v > MaxPool:
			return BaselineSpec{}, fmt.Errorf("--baseline %q: N is at most %d", s, MaxPool)
		}
		return BaselineSpec{Runs: v}, nil
	}
	return BaselineSpec{}, fmt.Errorf("--baseline %q: want history:last or history:median:N", s)
}

// ErrNoBaseline is returned by Baseline when the history holds no run to
// compare with.
var ErrNoBaseline = errors.New("history: no baseline yet")

// Baseline returns the pool of the newest spec.Runs runs f selects (with
// f.Baseline set: complete runs that passed), and the runs pooled, newest
// first. Fewer runs than asked are pooled when the history is younger;
// none is ErrNoBaseline.
func (s *Store) Baseline(ctx context.Context, spec BaselineSpec, f Filter) (*result.Result, []Run, error) {
	f.Baseline, f.Limit = true, spec.Runs
	runs, results, err := s.Results(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	if len(runs) == 0 {
		return nil, nil, ErrNoBaseline
	}
	pooled, err := Pool(results)
	if err != nil {
		return nil, nil, err
	}
	return pooled, runs, nil
}

// Describe says which runs a baseline pooled, for the gate's header:
// "history:median:10 (runs 31–40 of sqlite:h.db)".
func Describe(spec BaselineSpec, runs []Run, store Source) string {
	note := ""
	if len(runs) < spec.Runs {
		note = fmt.Sprintf("; only %d of %d yet", len(runs), spec.Runs)
	}
	if len(runs) == 1 {
		return fmt.Sprintf("%s (run %d of %s%s)", spec, runs[0].ID, store, note)
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[len(runs)-1-i] = strconv.FormatInt(r.ID, 10)
	}
	list := strings.Join(ids, ",")
	if len(ids) > 6 {
		list = ids[0] + ",…," + ids[len(ids)-1]
	}
	return fmt.Sprintf("%s (runs %s of %s%s)", spec, list, store, note)
}
