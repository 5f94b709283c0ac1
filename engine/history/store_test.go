package history

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// The suite runs against both dialects: they share one schema and one
// set of queries, and a difference between them is a bug.

func TestStoreSQLite(t *testing.T) { testStore(t, sqliteSource) }

func TestStorePostgres(t *testing.T) { testStore(t, postgresSource) }

// testStore runs each part of the suite on a new store open returns.
func testStore(t *testing.T, open func(t testing.TB) Source) {
	for name, test := range map[string]func(t *testing.T, s *Store){
		"round trip":   testRoundTrip,
		"filters":      testFilters,
		"prune":        testPrune,
		"baseline":     testBaseline,
		"no baseline":  testNoBaseline,
		"newer schema": testNewerSchema,
	} {
		t.Run(name, func(t *testing.T) { test(t, openStore(t, open(t))) })
	}
}

// testRoundTrip: what Save stores, List and Get give back, and the stage
// rows hold the stages' figures as columns.
func testRoundTrip(t *testing.T, s *Store) {
	ctx := context.Background()
	r := makeResult(runSpec{seed: 1, runSeed: 42})
	labels := map[string]string{"branch": "main", "commit": "abc123"}
	before := time.Now().Add(-time.Second)
	id, err := s.Save(ctx, Entry{Result: r, Labels: labels, Verdict: VerdictGateFailed, Reason: "ttft p99 regressed", Source: "merge"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)

	runs, err := s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("List gave %d runs, want 1", len(runs))
	}
	got := runs[0]
	want := Run{ID: id, Start: r.Run.Start, End: r.Run.End, Scenario: "scenarios/chat.lua", Fingerprint: Fingerprint(r),
		Target: "http://127.0.0.1:8000", Model: "sim-7b", Seed: 42, Complete: true, Verdict: VerdictGateFailed,
		Reason: "ttft p99 regressed", Source: "merge", Version: "v0.test", Labels: labels}
	if got.Stored.Before(before) || got.Stored.After(after) {
		t.Errorf("Stored = %v, want between %v and %v", got.Stored, before, after)
	}
	checkRun(t, got, want)

	gotRun, gotRes, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, gotRun, want)
	if !gotRun.Stored.Equal(got.Stored) {
		t.Errorf("Get's Stored = %v, List's %v", gotRun.Stored, got.Stored)
	}
	if a, b := resultJSON(t, r), resultJSON(t, gotRes); !bytes.Equal(a, b) {
		t.Errorf("Get's result differs from the saved one:\nsaved %.300s\n  got %.300s", a, b)
	}
	if len(gotRes.Stages) != 2 || gotRes.Stages[1].TTFT.HDR == "" || gotRes.Stages[1].TTFT.P99 != r.Stages[1].TTFT.P99 {
		t.Errorf("Get's stages lost their histograms: %+v", gotRes.Stages)
	}
	if _, _, err := s.Get(ctx, id+1000); !errors.Is(err, ErrNoRun) || !strings.Contains(err.Error(), s.src.String()) {
		t.Errorf("Get of a missing id: %v, want ErrNoRun naming %s", err, s.src)
	}
	checkStageRows(t, s, id, r)
}

// checkRun compares a stored run's metadata with want, Stored aside.
func checkRun(t *testing.T, got, want Run) {
	t.Helper()
	if !got.Start.Equal(want.Start) || !got.End.Equal(want.End) {
		t.Errorf("run %d: Start, End = %v, %v; want %v, %v", got.ID, got.Start, got.End, want.Start, want.End)
	}
	got.Stored, got.Start, got.End = time.Time{}, want.Start, want.End
	if !runEqual(got, want) {
		t.Errorf("run:\n got %+v\nwant %+v", got, want)
	}
}

func runEqual(a, b Run) bool {
	return maps.Equal(a.Labels, b.Labels) && a.ID == b.ID && a.Stored.Equal(b.Stored) && a.Start.Equal(b.Start) &&
		a.End.Equal(b.End) && a.Scenario == b.Scenario && a.Fingerprint == b.Fingerprint && a.Target == b.Target &&
		a.Model == b.Model && a.Seed == b.Seed && a.Segments == b.Segments && a.Complete == b.Complete &&
		a.Verdict == b.Verdict && a.Reason == b.Reason && a.Source == b.Source && a.Version == b.Version
}

// resultJSON is r as a result file holds it.
func resultJSON(t *testing.T, r *result.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkStageRows reads run id's stage rows straight from the table: a
// user's SQL sees them, not only this package.
func checkStageRows(t *testing.T, s *Store, id int64, r *result.Result) {
	t.Helper()
	rows, err := s.db.Query(s.rebind(`SELECT position, scenario, stage, stage_index, vus, requests, ok, failed, duration_s,
		req_per_sec, ttft_p50_ms, ttft_p99_ms, ttft_p90_ms, ttft_p95_ms, e2e_p99_ms, tpot_p90_ms, goodput, itl_p50_ms
		FROM llmload_run_stages WHERE run_id = ? ORDER BY position`), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for ; rows.Next(); n++ {
		var pos, index, vus int
		var scenario, stage string
		var requests, ok, failed int64
		var dur float64
		var rps, p50, p99, p90, p95, e2e99, tpot90, goodput, itl sql.NullFloat64
		if err := rows.Scan(&pos, &scenario, &stage, &index, &vus, &requests, &ok, &failed, &dur,
			&rps, &p50, &p99, &p90, &p95, &e2e99, &tpot90, &goodput, &itl); err != nil {
			t.Fatal(err)
		}
		if pos != n || pos >= len(r.Stages) {
			t.Fatalf("row position %d, want %d of %d stages", pos, n, len(r.Stages))
		}
		st := &r.Stages[pos]
		if scenario != st.Scenario || stage != st.Stage || index != st.Index || vus != st.VUs ||
			requests != st.Requests || ok != st.OK || failed != st.Failed || dur != st.DurationS {
			t.Errorf("row %d: %s/%s #%d vus %d requests %d ok %d failed %d %gs; want %s/%s #%d vus %d requests %d ok %d failed %d %gs",
				pos, scenario, stage, index, vus, requests, ok, failed, dur,
				st.Scenario, st.Stage, st.Index, st.VUs, st.Requests, st.OK, st.Failed, st.DurationS)
		}
		for _, c := range []struct {
			name string
			got  sql.NullFloat64
			want float64
		}{
			{"req_per_sec", rps, st.ReqPerSec}, {"ttft_p50_ms", p50, st.TTFT.P50}, {"ttft_p99_ms", p99, st.TTFT.P99},
			{"ttft_p90_ms", p90, st.TTFT.P90}, {"ttft_p95_ms", p95, st.TTFT.P95}, {"e2e_p99_ms", e2e99, st.E2E.P99},
			{"tpot_p90_ms", tpot90, st.TPOT.P90}, {"goodput", goodput, st.Goodput},
		} {
			if !c.got.Valid || c.got.Float64 != c.want || c.want == 0 {
				t.Errorf("row %d: %s = %v, want %g (and not 0)", pos, c.name, c.got, c.want)
			}
		}
		if itl.Valid {
			t.Errorf("row %d: itl_p50_ms = %g, want NULL: the stage measured no ITL", pos, itl.Float64)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(r.Stages) {
		t.Errorf("%d stage rows, want %d", n, len(r.Stages))
	}
}

// filterRuns are the runs testFilters stores, not in the order they
// started, so that newest-first is not the order of their ids.
var filterRuns = []struct {
	name    string
	hour    int
	spec    runSpec
	verdict string
	labels  map[string]string
}{
	{"a", 0, runSpec{scenario: "scenarios/chat.lua", script: "s1"}, VerdictPassed, map[string]string{"branch": "main", "gpu": "a100"}},
	{"d", 5, runSpec{scenario: "scenarios/xchat.lua", script: "s1", model: "other-model"}, VerdictPassed, map[string]string{"branch": "dev"}},
	{"b", 3, runSpec{scenario: "other/chat.lua", script: "s1"}, VerdictGateFailed, map[string]string{"branch": "main", "gpu": "h100"}},
	{"c", 1, runSpec{scenario: "chat.lua", script: "s2"}, VerdictFailed, map[string]string{"branch": "dev", "gpu": "a100"}},
	{"f", 4, runSpec{scenario: "scenarios/my%chat.lua", script: "s1"}, VerdictPassed, map[string]string{"branch": "main", "gpu": "a100"}},
	{"e", 2, runSpec{scenario: "scenarios/my_chat.lua", script: "s2", partial: true}, VerdictPassed, nil},
	{"g", 6, runSpec{scenario: "scenarios/Chat.lua", script: "s3"}, VerdictPassed, map[string]string{"gpu": "a100"}},
	{"h", 7, runSpec{scenario: "tests/café.lua", script: "s3"}, VerdictFailed, nil},
}

// testFilters: each filter keeps exactly its runs, newest first.
func testFilters(t *testing.T, s *Store) {
	ctx := context.Background()
	names := map[int64]string{}
	fingerprints := map[string]string{}
	for _, fr := range filterRuns {
		sp := fr.spec
		sp.n, sp.start = 5, t0.Add(time.Duration(fr.hour)*time.Hour)
		r := makeResult(sp)
		names[save(t, s, r, fr.verdict, fr.labels)] = fr.name
		fingerprints[sp.script] = Fingerprint(r)
	}
	hour := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name string
		f    Filter
		want string // the runs' names, newest first
	}{
		{"all", Filter{}, "hgdfbeca"},
		{"scenario path", Filter{Scenario: "scenarios/chat.lua"}, "a"},
		// The base name matches in any directory, but not as the end of
		// another name, and LIKE's wildcards in it are literal.
		{"scenario base name", Filter{Scenario: "chat.lua"}, "bca"},
		{"scenario with _", Filter{Scenario: "my_chat.lua"}, "e"},
		{"scenario with %", Filter{Scenario: "my%chat.lua"}, "f"},
		{"scenario is case-sensitive", Filter{Scenario: "Chat.lua"}, "g"},
		{"scenario base name not ASCII", Filter{Scenario: "café.lua"}, "h"},
		{"fingerprint", Filter{Fingerprint: fingerprints["s2"]}, "ec"},
		{"model", Filter{Model: "other-model"}, "d"},
		{"target", Filter{Target: "http://127.0.0.1:8000"}, "hgdfbeca"},
		{"one label", Filter{Labels: map[string]string{"branch": "main"}}, "fba"},
		{"every label must match", Filter{Labels: map[string]string{"branch": "main", "gpu": "a100"}}, "fa"},
		{"a label no run has", Filter{Labels: map[string]string{"branch": "main", "gpu": "tpu"}}, ""},
		{"since is inclusive", Filter{Since: hour(2)}, "hgdfbe"},
		{"until is exclusive", Filter{Until: hour(2)}, "ca"},
		{"since and until", Filter{Since: hour(1), Until: hour(4)}, "bec"},
		{"limit keeps the newest", Filter{Limit: 2}, "hg"},
		{"baseline: complete and passed", Filter{Baseline: true}, "gdfa"},
		{"measured: complete and not failed", Filter{Measured: true}, "gdfba"},
		{"all together", Filter{Baseline: true, Labels: map[string]string{"gpu": "a100"}, Since: hour(1), Limit: 1}, "g"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := s.List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, r := range runs {
				got.WriteString(names[r.ID])
			}
			if got.String() != tc.want {
				t.Errorf("List(%+v) = %q, want %q", tc.f, got.String(), tc.want)
			}
		})
	}
}

// testPrune: --keep keeps the newest of each plan, --older-than drops by
// start, and a pruned run's labels and stage rows go with it.
func testPrune(t *testing.T, s *Store) {
	ctx := context.Background()
	at := func(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }
	var ids []int64 // p1 at 0, 60, 120, 180 min; p2 at 30, 90
	for _, x := range []struct {
		script  string
		minutes int
	}{{"p1", 0}, {"p2", 30}, {"p1", 60}, {"p2", 90}, {"p1", 120}, {"p1", 180}} {
		r := makeResult(runSpec{n: 5, script: x.script, start: at(x.minutes)})
		ids = append(ids, save(t, s, r, VerdictPassed, map[string]string{"plan": x.script}))
	}
	steps := []struct {
		name    string
		keep    int
		before  time.Time
		deleted int64
		left    []int64 // ids, newest first
	}{
		{"nothing asked", 0, time.Time{}, 0, []int64{ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"keep 2 of each plan", 2, time.Time{}, 2, []int64{ids[5], ids[4], ids[3], ids[1]}},
		{"keep 2 again", 2, time.Time{}, 0, []int64{ids[5], ids[4], ids[3], ids[1]}},
		{"older than 120 min", 0, at(120), 2, []int64{ids[5], ids[4]}},
		// Both rules doom the run of 120 min: it is deleted, and
		// counted, once.
		{"keep 1 and older than 121 min", 1, at(121), 1, []int64{ids[5]}},
	}
	for _, st := range steps {
		n, err := s.Prune(ctx, st.keep, st.before)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if n != st.deleted {
			t.Errorf("%s: Prune deleted %d, want %d", st.name, n, st.deleted)
		}
		if got := listIDs(t, s, Filter{}); !slices.Equal(got, st.left) {
			t.Errorf("%s: left %v, want %v", st.name, got, st.left)
		}
	}
	for _, table := range []string{"llmload_run_labels", "llmload_run_stages"} {
		var n int
		if err := s.db.QueryRow(s.rebind("SELECT count(*) FROM "+table+" WHERE run_id <> ?"), ids[5]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s holds %d rows of pruned runs", table, n)
		}
	}
}

func listIDs(t *testing.T, s *Store, f Filter) []int64 {
	t.Helper()
	runs, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// baselineRuns are testBaseline's passed runs, oldest first: their
// stages last 10 or 20 s at different rates, so that a pool's rate (the
// summed requests over the summed windows) differs from the mean of the
// runs' rates, and their latencies differ in scale, so that a pooled
// percentile differs from each run's and from their median.
var baselineRuns = []runSpec{
	{n: 300, dur: 10 * time.Second, scale: 1.0, seed: 11},
	{n: 100, dur: 10 * time.Second, scale: 1.4, seed: 12},
	{n: 400, dur: 20 * time.Second, scale: 0.8, seed: 13},
	{n: 150, dur: 10 * time.Second, scale: 1.1, seed: 14},
}

// testBaseline: history:last is the newest passed run; history:median:N
// pools the newest N exactly, as one run of all their requests.
func testBaseline(t *testing.T, s *Store) {
	ctx := context.Background()
	specs := slices.Clone(baselineRuns)
	var ids []int64
	for i := range specs {
		specs[i].start = t0.Add(time.Duration(i) * time.Hour)
		ids = append(ids, save(t, s, makeResult(specs[i]), VerdictPassed, nil))
	}
	// Newer runs that must not count: a failed gate and an interrupted run.
	save(t, s, makeResult(runSpec{n: 50, scale: 9, seed: 15, start: t0.Add(5 * time.Hour)}), VerdictGateFailed, nil)
	save(t, s, makeResult(runSpec{n: 50, scale: 9, seed: 16, start: t0.Add(6 * time.Hour), partial: true}), VerdictPassed, nil)

	last, runs, err := s.Baseline(ctx, BaselineSpec{Runs: 1}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != ids[3] {
		t.Fatalf("history:last pooled %v, want run %d", runs, ids[3])
	}
	if a, b := resultJSON(t, last), resultJSON(t, makeResult(specs[3])); !bytes.Equal(a, b) {
		t.Errorf("history:last is not the newest passed run")
	}

	pooled, runs, err := s.Baseline(ctx, BaselineSpec{Runs: 3}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIDs(runs), []int64{ids[3], ids[2], ids[1]}; !slices.Equal(got, want) {
		t.Fatalf("history:median:3 pooled %v, want %v", got, want)
	}
	singles := []*result.Result{makeResult(specs[1]), makeResult(specs[2]), makeResult(specs[3])}
	// One collector fed all three runs' requests: what the pool must be.
	whole := makeResult(specs[3], specs[2], specs[1])
	for i := range pooled.Stages {
		checkPooledStage(t, &pooled.Stages[i], &whole.Stages[i], singles, i)
	}
	if !pooled.Run.Start.Equal(specs[1].start) {
		t.Errorf("pooled Start = %v, want the oldest pooled run's %v", pooled.Run.Start, specs[1].start)
	}

	// A younger history than asked pools what there is.
	if _, runs, err = s.Baseline(ctx, BaselineSpec{Runs: 10}, Filter{}); err != nil || len(runs) != 4 {
		t.Errorf("history:median:10 of 4 passed runs pooled %d runs (%v), want 4", len(runs), err)
	}
}

func runIDs(runs []Run) []int64 {
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// checkPooledStage compares stage i of a pool with the same stage of one
// run holding all the requests, and with the singles' merged histograms.
func checkPooledStage(t *testing.T, got, whole *metrics.StageSummary, singles []*result.Result, i int) {
	t.Helper()
	var requests, good int64
	var dur float64
	var dists []metrics.Dist
	for _, r := range singles {
		st := &r.Stages[i]
		requests += st.Requests
		good += st.GoodRequests
		dur += st.DurationS
		dists = append(dists, st.TTFT)
	}
	merged, err := metrics.MergeDists(dists...)
	if err != nil {
		t.Fatal(err)
	}
	name := got.Scenario + "/" + got.Stage
	if got.TTFT.Count != requests || got.Requests != requests || got.Requests != whole.Requests {
		t.Errorf("%s: TTFT count %d, requests %d; want %d (the sum), one run's %d", name, got.TTFT.Count, got.Requests, requests, whole.Requests)
	}
	if got.TTFT.P99 != merged.P99 {
		t.Errorf("%s: pooled TTFT P99 = %g, want %g (the runs' histograms merged)", name, got.TTFT.P99, merged.P99)
	}
	for _, p := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT P99", got.TTFT.P99, whole.TTFT.P99}, {"TTFT P50", got.TTFT.P50, whole.TTFT.P50},
		{"TTFT max", got.TTFT.Max, whole.TTFT.Max}, {"E2E P90", got.E2E.P90, whole.E2E.P90},
		{"TPOT P99", got.TPOT.P99, whole.TPOT.P99},
	} {
		if p.got != p.want {
			t.Errorf("%s: pooled %s = %g, want %g (one run of all the requests)", name, p.name, p.got, p.want)
		}
	}
	mean := (singles[0].Stages[i].ReqPerSec + singles[1].Stages[i].ReqPerSec + singles[2].Stages[i].ReqPerSec) / 3
	if want := float64(requests) / dur; got.ReqPerSec != want || want == mean {
		t.Errorf("%s: pooled req/s %g, want %g (summed requests over summed windows; the mean of rates is %g)", name, got.ReqPerSec, want, mean)
	}
	if want := float64(good) / dur; got.Goodput != want || got.DurationS != dur {
		t.Errorf("%s: pooled goodput %g over %gs, want %g over %gs", name, got.Goodput, got.DurationS, want, dur)
	}
}

// testNoBaseline: a history with no complete passed run of the plan has
// no baseline, and says so with ErrNoBaseline.
func testNoBaseline(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, _, err := s.Baseline(ctx, BaselineSpec{Runs: 1}, Filter{}); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("empty store: %v, want ErrNoBaseline", err)
	}
	r := makeResult(runSpec{n: 5, script: "mine"})
	save(t, s, r, VerdictGateFailed, nil)
	save(t, s, makeResult(runSpec{n: 5, script: "mine", partial: true}), VerdictPassed, nil)
	save(t, s, makeResult(runSpec{n: 5, script: "another"}), VerdictPassed, nil)
	_, _, err := s.Baseline(ctx, BaselineSpec{Runs: 5}, Filter{Fingerprint: Fingerprint(r)})
	if !errors.Is(err, ErrNoBaseline) {
		t.Errorf("only a failed gate and an interrupted run of the plan: %v, want ErrNoBaseline", err)
	}
}

// testNewerSchema: a store written by a newer llmload is refused, not
// misread.
func testNewerSchema(t *testing.T, s *Store) {
	if _, err := s.db.Exec(s.rebind("UPDATE llmload_schema SET version = ?"), SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), s.src)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a schema %d store: %v, want ErrNewerSchema", SchemaVersion+1, err)
	}
	checkMessage(t, err, s.src, "newer llmload")
}

// checkMessage: err names the store and says want, and never holds the
// store's password.
func checkMessage(t *testing.T, err error, src Source, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	msg := err.Error()
	if !strings.Contains(msg, src.String()) || !strings.Contains(msg, want) {
		t.Errorf("error %q: want it to name %s and say %q", msg, src, want)
	}
	if pw := password(src.URL); pw != "" && strings.Contains(msg, pw) {
		t.Errorf("error %q holds the password", msg)
	}
}
