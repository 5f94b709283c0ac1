package history

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/pgtest"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// t0 is the first made-up run's start: whole seconds, so that both
// dialects' timestamps (PostgreSQL keeps microseconds) hold it exactly.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// runSpec describes a made-up run; the zero value is a complete run of
// 200 requests in each of two 10 s stages of scenarios/chat.lua, started
// at t0.
type runSpec struct {
	n        int           // requests per stage; 0 means 200
	dur      time.Duration // each stage's length; 0 means 10 s
	scale    float64       // every latency is multiplied by it; 0 means 1
	seed     uint64        // the latency generator's seed
	start    time.Time
	scenario string // the script path; "" means scenarios/chat.lua
	model    string // "" means sim-7b
	script   string // the script's source: another source, another plan
	runSeed  int64  // the run's --seed, which the fingerprint ignores
	params   map[string]string
	partial  bool // interrupted: Run.Complete false
}

func (sp runSpec) withDefaults() runSpec {
	if sp.n == 0 {
		sp.n = 200
	}
	if sp.dur == 0 {
		sp.dur = 10 * time.Second
	}
	if sp.scale == 0 {
		sp.scale = 1
	}
	if sp.start.IsZero() {
		sp.start = t0
	}
	if sp.scenario == "" {
		sp.scenario = "scenarios/chat.lua"
	}
	if sp.model == "" {
		sp.model = "sim-7b"
	}
	return sp
}

// fixtureSLO makes goodput measured, so that its column has values.
var fixtureSLO = plan.SLO{TTFT: 300 * time.Millisecond}

// fixtureStages are the made-up run's stages: two, so that stage rows
// have positions and a pool matches stages by name.
var fixtureStages = []engine.StageMark{
	{Scenario: "chat", Stage: "low", Index: 0, Target: 2},
	{Scenario: "chat", Stage: "high", Index: 1, Target: 8},
}

// makeResult runs the requests of specs through one real
// metrics.Collector, so the result carries real HDR histograms: TTFT
// lognormal around 200 ms, TPOT around 20 ms, E2E TTFT plus 99 TPOTs,
// each times the spec's scale. Each stage holds every spec's requests
// over the sum of their windows, so several specs make the one run a
// pool of their single runs must equal; the metadata is the first's.
//
// Results are made once per specs and then read from their JSON, a fresh
// copy each time: a collector costs a third of a second under -race.
func makeResult(specs ...runSpec) *result.Result {
	key := fmt.Sprintf("%+v", specs)
	fixtures.Lock()
	defer fixtures.Unlock()
	doc, ok := fixtures.docs[key]
	if !ok {
		var b bytes.Buffer
		if err := result.WriteJSON(&b, collectResult(specs)); err != nil {
			panic(err) // a Result the collector made always encodes
		}
		doc = b.Bytes()
		fixtures.docs[key] = doc
	}
	r, err := result.ReadJSON(bytes.NewReader(doc))
	if err != nil {
		panic(err)
	}
	return r
}

// fixtures are makeResult's results, as JSON.
var fixtures = struct {
	sync.Mutex
	docs map[string][]byte
}{docs: map[string][]byte{}}

func collectResult(specs []runSpec) *result.Result {
	specs = slices.Clone(specs)
	rngs := make([]*rand.Rand, len(specs))
	for i := range specs {
		specs[i] = specs[i].withDefaults()
		rngs[i] = rand.New(rand.NewPCG(specs[i].seed, 0x5eed))
	}
	c := metrics.NewCollector(metrics.WithSLO(fixtureSLO))
	at := specs[0].start
	for _, mark := range fixtureStages {
		mark.At = at
		c.StageStarted(mark)
		for j, sp := range specs {
			for i := range sp.n {
				c.Sample(fixtureSample(rngs[j], sp, mark, at.Add(time.Duration(i)*sp.dur/time.Duration(sp.n))))
			}
			at = at.Add(sp.dur)
		}
		mark.At = at
		c.StageEnded(mark)
	}
	sp := specs[0]
	parts := plan.Plan{Seed: sp.runSeed}.Parts([]byte("-- "+sp.script), sp.params, nil)
	meta := result.Meta{Scenario: sp.scenario, Target: "http://127.0.0.1:8000", Model: sp.model,
		Simulator: true, Start: sp.start, End: at, Version: "v0.test", Complete: !sp.partial,
		Seed: sp.runSeed, SLO: result.SLOFrom(fixtureSLO), PlanParts: &parts, Plan: parts.Fingerprint()}
	return result.New(meta, c.Close())
}

func fixtureSample(rng *rand.Rand, sp runSpec, mark engine.StageMark, start time.Time) engine.Sample {
	ms := func(median float64) time.Duration {
		return time.Duration(sp.scale * median * math.Exp(0.5*rng.NormFloat64()) * float64(time.Millisecond))
	}
	ttft, tpot := ms(200), ms(20)
	return engine.Sample{Scenario: mark.Scenario, Stage: mark.Stage, Result: engine.Result{
		Start: start, Status: 200, TTFB: ttft, TTFT: ttft, TTFC: ttft, TPOT: tpot, E2E: ttft + 99*tpot,
		OutputTokens: 100, InputTokens: 50, Streamed: true,
		TokensSource: engine.TokensFromUsage, InputTokensSource: engine.TokensFromUsage}}
}

// openStore opens src for the test and closes it when the test ends.
func openStore(t testing.TB, src Source) *Store {
	t.Helper()
	s, err := Open(context.Background(), src)
	if err != nil {
		t.Fatalf("Open(%s): %v", src, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// save stores r with a verdict and labels, failing the test on error.
func save(t testing.TB, s *Store, r *result.Result, verdict string, labels map[string]string) int64 {
	t.Helper()
	id, err := s.Save(context.Background(), Entry{Result: r, Labels: labels, Verdict: verdict, Reason: "reason of " + verdict, Source: "run"})
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	return id
}

// sqliteSource is a new store file in the test's directory.
func sqliteSource(t testing.TB) Source {
	return Source{Dialect: SQLite, Path: filepath.Join(t.TempDir(), "history.db")}
}

// postgresSource is a new, empty database of the test's own.
func postgresSource(t testing.TB) Source {
	src, err := ParseDSN(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return src
}
