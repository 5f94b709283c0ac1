package history

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmload/llmload/engine/result"
)

// Run is a stored run's metadata.
type Run struct {
	ID          int64
	Stored      time.Time
	Start, End  time.Time
	Scenario    string
	Fingerprint string
	Target      string
	Model       string
	Seed        int64
	Segments    int // the merged segments' count; 0 for a whole run
	Complete    bool
	Verdict     string
	Reason      string
	Source      string
	Version     string
	Labels      map[string]string
}

// Filter selects runs; zero fields select all.
type Filter struct {
	Scenario    string // the script path as the run gave it, or its base name
	Fingerprint string
	Target      string
	Model       string
	Labels      map[string]string // every one must match
	Since       time.Time         // started at or after
	Until       time.Time         // started before
	// Baseline keeps only runs a gate may compare with: complete, and
	// passed (a run that failed its gate never becomes a baseline).
	Baseline bool
	// Measured keeps only runs with figures to plot: complete, and not
	// failed (nothing trustworthy measured).
	Measured bool
	Limit    int // the newest Limit; 0 for all
}

// where renders f as a WHERE clause over llmload_runs r.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(c string, a ...any) { conds = append(conds, c); args = append(args, a...) }
	if f.Scenario != "" {
		// Not LIKE: SQLite's ignores case and PostgreSQL's does not, and
		// scenarios/Chat.lua is not scenarios/chat.lua.
		suffix := "/" + f.Scenario
		add("(r.scenario = ? OR substr(r.scenario, length(r.scenario) - ? + 1) = ?)", f.Scenario, utf8.RuneCountInString(suffix), suffix)
	}
	if f.Fingerprint != "" {
		add("r.fingerprint = ?", f.Fingerprint)
	}
	if f.Target != "" {
		add("r.target = ?", f.Target)
	}
	if f.Model != "" {
		add("r.model = ?", f.Model)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		add("EXISTS (SELECT 1 FROM llmload_run_labels l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)", k, f.Labels[k])
	}
	if !f.Since.IsZero() {
		add("r.started_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		add("r.started_at < ?", f.Until.UTC())
	}
	if f.Baseline {
		add("r.complete = ? AND r.verdict = ?", true, VerdictPassed)
	}
	if f.Measured {
		add("r.complete = ? AND r.verdict <> ?", true, VerdictFailed)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const runColumns = `r.id, r.stored_at, r.started_at, r.ended_at, r.scenario, r.fingerprint, r.target, r.model,
	r.seed, r.segments, r.complete, r.verdict, r.reason, r.source, r.llmload_version`

// List returns the runs f selects, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Run, error) {
	where, args := f.where()
	q := "SELECT " + runColumns + " FROM llmload_runs r" + where + " ORDER BY r.started_at DESC, r.id DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, s.wrap("list runs", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.ID, &r.Stored, &r.Start, &r.End, &r.Scenario, &r.Fingerprint, &r.Target, &r.Model,
			&r.Seed, &r.Segments, &r.Complete, &r.Verdict, &r.Reason, &r.Source, &r.Version); err != nil {
			return nil, s.wrap("list runs", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list runs", err)
	}
	return runs, s.labels(ctx, runs)
}

// labels fills the runs' Labels.
func (s *Store) labels(ctx context.Context, runs []Run) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[int64]*Run, len(runs))
	ids := make([]string, len(runs))
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
		runs[i].Labels = map[string]string{}
		ids[i] = fmt.Sprint(runs[i].ID)
	}
	// The ids are integers this code read: safe to inline, and one
	// query instead of one per run.
	rows, err := s.db.QueryContext(ctx, "SELECT run_id, key, value FROM llmload_run_labels WHERE run_id IN ("+strings.Join(ids, ",")+")")
	if err != nil {
		return s.wrap("read labels", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k, v string
		if err := rows.Scan(&id, &k, &v); err != nil {
			return s.wrap("read labels", err)
		}
		byID[id].Labels[k] = v
	}
	return s.wrap("read labels", rows.Err())
}

// ErrNoRun is returned by Get for an id the store does not hold.
var ErrNoRun = fmt.Errorf("history: no such run")

// Get returns a run's metadata and its result.
func (s *Store) Get(ctx context.Context, id int64) (Run, *result.Result, error) {
	row := s.db.QueryRowContext(ctx, s.rebind("SELECT "+runColumns+", r.result_json FROM llmload_runs r WHERE r.id = ?"), id)
	var r Run
	var doc string
	err := row.Scan(&r.ID, &r.Stored, &r.Start, &r.End, &r.Scenario, &r.Fingerprint, &r.Target, &r.Model,
		&r.Seed, &r.Segments, &r.Complete, &r.Verdict, &r.Reason, &r.Source, &r.Version, &doc)
	if err == sql.ErrNoRows {
		return Run{}, nil, fmt.Errorf("%w %d in %s", ErrNoRun, id, s.src)
	}
	if err != nil {
		return Run{}, nil, s.wrap("read run", err)
	}
	runs := []Run{r}
	if err := s.labels(ctx, runs); err != nil {
		return Run{}, nil, err
	}
	res, err := result.ReadJSON(strings.NewReader(doc))
	if err != nil {
		return Run{}, nil, fmt.Errorf("history %s: run %d: its stored result: %w", s.src, id, err)
	}
	return runs[0], res, nil
}

// Results returns the runs f selects with their results, newest first.
func (s *Store) Results(ctx context.Context, f Filter) ([]Run, []*result.Result, error) {
	runs, err := s.List(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*result.Result, len(runs))
	for i, r := range runs {
		if _, out[i], err = s.Get(ctx, r.ID); err != nil {
			return nil, nil, err
		}
	}
	return runs, out, nil
}

// Prune deletes runs: all but the newest keep of each fingerprint when
// keep > 0, and those started before olderThan when it is set. It
// returns how many runs it deleted.
func (s *Store) Prune(ctx context.Context, keep int, before time.Time) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap("prune", err)
	}
	defer tx.Rollback()
	var doomed []any
	collect := func(q string, args ...any) error {
		rows, err := tx.QueryContext(ctx, s.rebind(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			doomed = append(doomed, id)
		}
		return rows.Err()
	}
	if keep > 0 {
		err = collect(`SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY fingerprint ORDER BY started_at DESC, id DESC) AS n
			FROM llmload_runs) ranked WHERE n > ?`, keep)
		if err != nil {
			return 0, s.wrap("prune", err)
		}
	}
	if !before.IsZero() {
		if err := collect(`SELECT id FROM llmload_runs WHERE started_at < ?`, before.UTC()); err != nil {
			return 0, s.wrap("prune", err)
		}
	}
	var n int64
	seen := map[any]bool{}
	for _, id := range doomed {
		if seen[id] {
			continue
		}
		seen[id] = true
		for _, q := range []string{`DELETE FROM llmload_run_labels WHERE run_id = ?`, `DELETE FROM llmload_run_stages WHERE run_id = ?`, `DELETE FROM llmload_runs WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, s.rebind(q), id); err != nil {
				return 0, s.wrap("prune", err)
			}
		}
		n++
	}
	return n, s.wrap("prune", tx.Commit())
}
