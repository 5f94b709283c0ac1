package history

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// Verdicts a stored run can have, as its exit code said.
const (
	VerdictPassed     = "passed"      // exit 0
	VerdictFailed     = "failed"      // exit 1: nothing trustworthy measured
	VerdictGateFailed = "gate_failed" // exit 99: a threshold or the baseline gate
)

// Entry is a finished run to store.
type Entry struct {
	Result *result.Result
	Labels map[string]string
	// Verdict is one of the Verdict constants; Reason its one line.
	Verdict string
	Reason  string
	// Source says what stored it: "run", "merge" or "import".
	Source string
	// Unique refuses a result the store already holds, byte for byte as
	// stored (an import of a file imported before): Save returns the run
	// that holds it and a *DuplicateError.
	Unique bool
}

// afterDuplicateCheck, when set by a test, runs between a Unique save's
// look-up and its insert: the window two imports of one file race in.
var afterDuplicateCheck func()

// DuplicateError is Save's refusal of a result the store holds already.
type DuplicateError struct {
	ID int64 // the run that holds it
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("history: the store holds this result already, as run %d", e.ID)
}

// column is one queryable figure of a stage row; since is the schema
// version that added it.
type column struct {
	name  string
	since int
	value func(st *metrics.StageSummary) any
}

// stageColumns are the stage rows' figures; latencies in milliseconds,
// NULL where the stage has no value.
var stageColumns = []column{
	{"req_per_sec", 1, func(st *metrics.StageSummary) any { return rate(st, st.ReqPerSec) }},
	{"output_tok_per_sec", 1, func(st *metrics.StageSummary) any { return rate(st, st.OutputTokPerSec) }},
	{"error_rate", 1, func(st *metrics.StageSummary) any {
		if st.Requests <= 0 {
			return nil
		}
		return float64(st.Failed) / float64(st.Requests)
	}},
	{"ttft_p50_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TTFT }, func(d metrics.Dist) float64 { return d.P50 })},
	{"ttft_p99_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TTFT }, func(d metrics.Dist) float64 { return d.P99 })},
	{"tpot_p50_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TPOT }, func(d metrics.Dist) float64 { return d.P50 })},
	{"tpot_p99_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TPOT }, func(d metrics.Dist) float64 { return d.P99 })},
	{"itl_p50_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.ITL }, func(d metrics.Dist) float64 { return d.P50 })},
	{"itl_p99_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.ITL }, func(d metrics.Dist) float64 { return d.P99 })},
	{"e2e_p50_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.E2E }, func(d metrics.Dist) float64 { return d.P50 })},
	{"e2e_p99_ms", 1, pct(func(st *metrics.StageSummary) metrics.Dist { return st.E2E }, func(d metrics.Dist) float64 { return d.P99 })},
	{"ttft_p90_ms", 2, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TTFT }, func(d metrics.Dist) float64 { return d.P90 })},
	{"ttft_p95_ms", 2, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TTFT }, func(d metrics.Dist) float64 { return d.P95 })},
	{"tpot_p90_ms", 2, pct(func(st *metrics.StageSummary) metrics.Dist { return st.TPOT }, func(d metrics.Dist) float64 { return d.P90 })},
	{"e2e_p90_ms", 2, pct(func(st *metrics.StageSummary) metrics.Dist { return st.E2E }, func(d metrics.Dist) float64 { return d.P90 })},
	{"goodput", 2, func(st *metrics.StageSummary) any {
		if st.DurationS <= 0 || st.GoodRequests == 0 && st.Goodput == 0 {
			return nil
		}
		return st.Goodput
	}},
}

func rate(st *metrics.StageSummary, v float64) any {
	if st.DurationS <= 0 {
		return nil
	}
	return v
}

func pct(dist func(*metrics.StageSummary) metrics.Dist, stat func(metrics.Dist) float64) func(*metrics.StageSummary) any {
	return func(st *metrics.StageSummary) any {
		d := dist(st)
		if d.Count == 0 {
			return nil
		}
		return stat(d)
	}
}

// Save stores e in one transaction and returns the run's id. A run that
// cannot be stored is never half there: its labels and stages go in the
// same transaction.
func (s *Store) Save(ctx context.Context, e Entry) (int64, error) {
	return s.saveAt(ctx, e, SchemaVersion)
}

// saveAt stores e with the columns of schema version v (a test writes a
// store of an older version).
func (s *Store) saveAt(ctx context.Context, e Entry, v int) (int64, error) {
	r := e.Result
	if r == nil {
		return 0, errors.New("history: no result to store")
	}
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, r); err != nil {
		return 0, fmt.Errorf("history: encode the result: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	digest := hex.EncodeToString(sum[:])
	uid := make([]byte, 16)
	rand.Read(uid)
	segments := len(r.Run.Segments)
	if r.Run.Segment != nil {
		segments = -1 // one segment of a run; Save's callers refuse these
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap("store the run", err)
	}
	defer tx.Rollback()
	if e.Unique && v >= 2 {
		if s.src.Dialect == Postgres {
			// Two imports of one file at once: the second waits for the
			// first's commit and then finds it. (SQLite's writers are
			// serialized already.)
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, digest); err != nil {
				return 0, s.wrap("store the run", err)
			}
		}
		var id int64
		err := tx.QueryRowContext(ctx, s.rebind(`SELECT id FROM llmload_runs WHERE result_sha256 = ? ORDER BY id LIMIT 1`), digest).Scan(&id)
		switch {
		case err == nil:
			return id, &DuplicateError{ID: id}
		case !errors.Is(err, sql.ErrNoRows):
			return 0, s.wrap("store the run", err)
		}
		if afterDuplicateCheck != nil {
			afterDuplicateCheck()
		}
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.rebind(`INSERT INTO llmload_runs
		(uid, stored_at, started_at, ended_at, scenario, fingerprint, target, model, seed, segments,
		 complete, verdict, reason, source, llmload_version, result_json)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		hex.EncodeToString(uid), time.Now().UTC(), r.Run.Start.UTC(), r.Run.End.UTC(), r.Run.Scenario, Fingerprint(r),
		r.Run.Target, r.Run.Model, r.Run.Seed, segments, r.Run.Complete, e.Verdict, e.Reason,
		e.Source, r.Run.Version, buf.String()).Scan(&id)
	if err != nil {
		return 0, s.wrap("store the run", err)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Labels)) {
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO llmload_run_labels (run_id, key, value) VALUES (?, ?, ?)`), id, k, e.Labels[k]); err != nil {
			return 0, s.wrap("store the run's labels", err)
		}
	}
	if v >= 2 {
		if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE llmload_runs SET result_sha256 = ? WHERE id = ?`), digest, id); err != nil {
			return 0, s.wrap("store the run", err)
		}
	}
	if err := s.insertStages(ctx, tx, id, r, v); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, s.wrap("store the run", err)
	}
	return id, nil
}

// insertStages writes r's stage rows with the columns of schema v.
func (s *Store) insertStages(ctx context.Context, tx *sql.Tx, id int64, r *result.Result, v int) error {
	names := []string{"run_id", "position", "scenario", "stage", "stage_index", "vus", "requests", "ok", "failed", "duration_s"}
	var cols []column
	for _, c := range stageColumns {
		if c.since <= v {
			cols = append(cols, c)
			names = append(names, c.name)
		}
	}
	q := s.rebind(fmt.Sprintf("INSERT INTO llmload_run_stages (%s) VALUES (%s)",
		strings.Join(names, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")))
	for i := range r.Stages {
		st := &r.Stages[i]
		args := []any{id, i, st.Scenario, st.Stage, st.Index, st.VUs, st.Requests, st.OK, st.Failed, st.DurationS}
		for _, c := range cols {
			args = append(args, c.value(st))
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return s.wrap("store the run's stages", err)
		}
	}
	return nil
}

// backfill fills cols of every stored stage row from its run's result.
func (s *Store) backfill(ctx context.Context, tx *sql.Tx, cols []column) error {
	if len(cols) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, result_json FROM llmload_runs`)
	if err != nil {
		return err
	}
	type run struct {
		id  int64
		doc string
	}
	var runs []run
	for rows.Next() {
		var x run
		if err := rows.Scan(&x.id, &x.doc); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	digest := s.rebind(`UPDATE llmload_runs SET result_sha256 = ? WHERE id = ?`)
	var set []string
	for _, c := range cols {
		set = append(set, c.name+" = ?")
	}
	q := s.rebind("UPDATE llmload_run_stages SET " + strings.Join(set, ", ") + " WHERE run_id = ? AND position = ?")
	for _, x := range runs {
		r, err := result.ReadJSON(strings.NewReader(x.doc))
		if err != nil {
			return fmt.Errorf("run %d: its stored result: %w", x.id, err)
		}
		var buf bytes.Buffer
		if err := result.WriteJSON(&buf, r); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		if _, err := tx.ExecContext(ctx, digest, hex.EncodeToString(sum[:]), x.id); err != nil {
			return err
		}
		for i := range r.Stages {
			var args []any
			for _, c := range cols {
				args = append(args, c.value(&r.Stages[i]))
			}
			if _, err := tx.ExecContext(ctx, q, append(args, x.id, i)...); err != nil {
				return err
			}
		}
	}
	return nil
}
