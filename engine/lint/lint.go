// Package lint checks a scenario against the practices that make an LLM
// load test trustworthy: sampling that varies, prompts that do not repeat
// (or say they mean to), stages long enough for the percentiles that are
// read, a warmup, and bounded outputs. Each finding is a Lint with a
// stable id, a severity and the fix.
//
// The rules are pure functions of a plan, the requests a dry run of the
// scenario built (or the first requests of the real run, kept by an
// Observer) and, at the end of a run, its measured stages. Check is the
// one entry point, so that `llmload check`, the start of `llmload run` and
// the result file say the same things.
package lint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity is how much a lint matters: a Warning fails --strict, Info
// only informs.
type Severity string

// Severities, worst first.
const (
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Source says what a lint was judged from.
type Source string

// Sources of a lint.
const (
	// FromPlan: the plan and a dry run of the scenario's iterations,
	// before anything was sent.
	FromPlan Source = "plan"
	// FromRun: the first requests of the real run and its measured stages.
	FromRun Source = "run"
)

// Lint ids. They are stable: scripts name them in options.lints.ignore,
// and CI reads them from the result file.
const (
	// RepeatedSampling: temperature 0, or one fixed seed on every request,
	// while prompts repeat exactly.
	RepeatedSampling = "repeated-sampling"
	// RepeatedPrefix: requests whose first bytes repeat an earlier
	// iteration's, without a unique prefix.
	RepeatedPrefix = "repeated-prefix"
	// ShortStage: stages too short for the percentiles that are read.
	ShortStage = "short-stage"
	// NoWarmup: no warmup before the first measured stage.
	NoWarmup = "no-warmup"
	// NoMaxTokens: requests without max_tokens.
	NoMaxTokens = "no-max-tokens"
	// StartBurst: a closed-model stage that starts BurstVUs or more VUs
	// within a second.
	StartBurst = "start-burst"
	// DryRun: the dry run of a scenario stopped at a script error, so its
	// requests are judged from the run instead.
	DryRun = "dry-run"
)

// IDs lists every lint id, sorted.
func IDs() []string {
	return []string{DryRun, NoMaxTokens, NoWarmup, RepeatedPrefix, RepeatedSampling, ShortStage, StartBurst}
}

// Known reports whether id names a lint.
func Known(id string) bool { return slices.Contains(IDs(), id) }

// Lint is one finding.
type Lint struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// Scenario and Stage locate it; empty when it concerns the whole plan
	// (Stage also when it concerns a scenario's every stage).
	Scenario string `json:"scenario,omitempty"`
	Stage    string `json:"stage,omitempty"`
	// Message says what was found and why it matters; Fix what to change.
	Message string `json:"message"`
	Fix     string `json:"fix"`
	// Ignored is the reason options.lints.ignore gave for silencing this
	// id; an ignored lint is still listed, and never fails --strict.
	Ignored string `json:"ignored,omitempty"`
	Source  Source `json:"source"`
}

// Failing reports whether l fails --strict: a warning not ignored.
func (l Lint) Failing() bool { return l.Severity == Warning && l.Ignored == "" }

// Where is "scenario/stage", "scenario" or "" for the whole plan.
func (l Lint) Where() string {
	switch {
	case l.Scenario != "" && l.Stage != "":
		return l.Scenario + "/" + l.Stage
	case l.Stage != "":
		return l.Stage
	}
	return l.Scenario
}

// Failing returns the lints that fail --strict, in order.
func Failing(ls []Lint) []Lint {
	var out []Lint
	for _, l := range ls {
		if l.Failing() {
			out = append(out, l)
		}
	}
	return out
}

// StrictReason is the one line a --strict failure ends with: how many
// warnings, and their ids.
func StrictReason(failing []Lint) string {
	var ids []string
	for _, l := range failing {
		if !slices.Contains(ids, l.ID) {
			ids = append(ids, l.ID)
		}
	}
	noun := "warnings"
	if len(failing) == 1 {
		noun = "warning"
	}
	return fmt.Sprintf("--strict: %d lint %s (%s); fix them, or silence one with options.lints.ignore = { [\"id\"] = \"reason\" }",
		len(failing), noun, strings.Join(ids, ", "))
}

// ignore marks the lints whose id ignore names with its reason.
func ignore(ls []Lint, reasons map[string]string) {
	for i := range ls {
		if r, ok := reasons[ls[i].ID]; ok {
			ls[i].Ignored = r
		}
	}
}

// sortLints orders warnings first, then by id and scenario, keeping the
// rules' own order (a scenario's stages in the plan's order) within, so
// that the same plan always prints the same list.
func sortLints(ls []Lint) {
	rank := func(s Severity) int {
		if s == Warning {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(ls, func(a, b Lint) int {
		return cmp.Or(cmp.Compare(rank(a.Severity), rank(b.Severity)), cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Scenario, b.Scenario))
	})
}
