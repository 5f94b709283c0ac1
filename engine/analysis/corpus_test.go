package analysis

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/servermetrics"
)

// corpusCase is one sweep of testdata/corpus.json and the reading an
// expert gives it, written by hand before the rules were coded.
type corpusCase struct {
	Name string `json:"name"`
	Why  string `json:"why"`
	// File is a recorded result in testdata; without it the sweep is
	// synthetic, from the slices below (one entry per level).
	File      string       `json:"file"`
	Load      []float64    `json:"load"`
	ReqPerSec []float64    `json:"req_per_sec"`
	TTFT      [][3]float64 `json:"ttft"` // p50, p90, p99 (ms)
	E2E       [][3]float64 `json:"e2e"`
	TTFTCount []int64      `json:"ttft_count"` // default 2000
	// Unreliable names a level's flagged percentiles: "ttft_p50", "e2e_p99".
	Unreliable [][]string `json:"unreliable"`
	SLOTTFTMS  float64    `json:"slo_ttft_ms"`
	// Requests are a level's requests in its window; without them the
	// knee's figures have no known noise.
	Requests []int64 `json:"requests"`
	// Open makes the levels target rates (an open-model sweep) with these
	// figures; each level's window is WindowS (default 60 s).
	Open     bool      `json:"open"`
	WindowS  float64   `json:"window_s"`
	Achieved []float64 `json:"achieved"`
	Dropped  []int64   `json:"dropped"`
	LagP99   []float64 `json:"lag_p99"` // ms
	// Server holds the server's gauges, sampled evenly within each level's
	// window: one slice of samples per level.
	Server    map[string]serverGauge `json:"server"` // "waiting", "running"
	Knee      reading                `json:"knee"`
	Cliff     reading                `json:"cliff"`
	TagCliffs []string               `json:"tag_cliffs"` // texts of the per-tag cliffs
}

// serverGauge is one server series of a case, by level.
type serverGauge struct {
	Name   string      `json:"name"`
	Levels [][]float64 `json:"levels"`
}

// reading is the expected Finding.
type reading struct {
	Found     bool   `json:"found"`
	Stage     string `json:"stage"`
	Metric    string `json:"metric"`
	Text      string `json:"text"`
	Tentative string `json:"tentative"`
	Suspect   string `json:"suspect"`
	// Server is the server's reading; nil expects none.
	Server *struct {
		Verdict string `json:"verdict"`
		Text    string `json:"text"`
	} `json:"server"`
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	data, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// runStart is the synthetic cases' run start; their stages begin 10 s
// later, so a server series read from the run start and not from the
// first stage is off by that much.
var runStart = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// recorded reads a result file of testdata: its stages, server metrics
// and run start.
func recorded(t *testing.T, name string) ([]metrics.StageSummary, Server) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Run struct {
			Start time.Time `json:"start"`
		} `json:"run"`
		Stages        []metrics.StageSummary `json:"stages"`
		ServerMetrics *servermetrics.Result  `json:"server_metrics"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r.Stages, Server{Metrics: r.ServerMetrics, Start: r.Run.Start}
}

// stages turns a case into the stage summaries and server view Analyze
// reads.
func (c corpusCase) stages(t *testing.T) ([]metrics.StageSummary, Server) {
	t.Helper()
	if c.File != "" {
		return recorded(t, c.File)
	}
	window := cmp.Or(c.WindowS, 60)
	var out []metrics.StageSummary
	for i, l := range c.Load {
		st := metrics.StageSummary{Scenario: "s", Stage: "c" + strconv.FormatFloat(l, 'g', -1, 64), VUs: int(l),
			Complete: true, DurationS: window, PlannedS: window}
		st.Start = runStart.Add(time.Duration((10 + float64(i)*window) * float64(time.Second)))
		st.End = st.Start.Add(time.Duration(window * float64(time.Second)))
		if c.ReqPerSec != nil {
			st.ReqPerSec = c.ReqPerSec[i]
		}
		if c.Requests != nil {
			st.Requests, st.OK = c.Requests[i], c.Requests[i]
		}
		if c.Open {
			c.openLevel(&st, i, l, window)
		}
		n := int64(2000)
		if c.TTFTCount != nil {
			n = c.TTFTCount[i]
		}
		var flags []string
		if c.Unreliable != nil {
			flags = c.Unreliable[i]
		}
		if c.TTFT != nil {
			st.TTFT = distOf(c.TTFT[i], n, flags, "ttft_")
		}
		if c.E2E != nil {
			st.E2E = distOf(c.E2E[i], n, flags, "e2e_")
			st.E2E.Mean = 0 // the knee reads the table's req/s in these cases
			if c.Open {
				st.E2E.Mean = st.E2E.P50 // for the VUs a rate needs
			}
		}
		out = append(out, st)
	}
	return out, c.server(out)
}

// openLevel makes st level i of an open-model sweep at rate.
func (c corpusCase) openLevel(st *metrics.StageSummary, i int, rate, window float64) {
	st.Stage, st.VUs, st.TargetRate = "r"+strconv.FormatFloat(rate, 'g', -1, 64), 0, rate
	st.AchievedRate, st.ReqPerSec = c.Achieved[i], c.Achieved[i]
	if c.Dropped != nil {
		st.DroppedIterations = c.Dropped[i]
	}
	st.Iterations = int64(math.Round(st.AchievedRate * window))
	st.ScheduledRate = st.AchievedRate + float64(st.DroppedIterations)/window
	if c.LagP99 != nil {
		st.ScheduleLag = metrics.Dist{Count: st.Iterations, P50: c.LagP99[i] / 3, P99: c.LagP99[i]}
	}
}

// server samples the case's gauges evenly within each stage's window, in
// seconds since runStart as a scraper records them.
func (c corpusCase) server(stages []metrics.StageSummary) Server {
	if c.Server == nil {
		return Server{}
	}
	res := &servermetrics.Result{}
	for _, role := range []string{"running", "waiting"} {
		g, ok := c.Server[role]
		if !ok {
			continue
		}
		s := servermetrics.Series{Name: g.Name, Unit: servermetrics.UnitRequests}
		for i, vs := range g.Levels {
			from, to := stages[i].Start.Sub(runStart).Seconds(), stages[i].End.Sub(runStart).Seconds()
			for j, v := range vs {
				s.T = append(s.T, from+(to-from)*(float64(j)+0.5)/float64(len(vs)))
				s.V = append(s.V, v)
			}
		}
		res.Series = append(res.Series, s)
	}
	return Server{Metrics: res, Start: runStart}
}

func (c corpusCase) slo() plan.SLO {
	return plan.SLO{TTFT: time.Duration(c.SLOTTFTMS * float64(time.Millisecond))}
}

func distOf(q [3]float64, n int64, flags []string, prefix string) metrics.Dist {
	d := metrics.Dist{Count: n, P50: q[0], P90: q[1], P99: q[2]}
	for _, f := range flags {
		if p, ok := strings.CutPrefix(f, prefix); ok {
			d.Unreliable = append(d.Unreliable, p)
		}
	}
	return d
}

func TestCorpus(t *testing.T) {
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			stages, server := c.stages(t)
			a := Analyze(stages, c.slo(), server)
			if got, want := len(a.Sweeps), 1; got != want {
				t.Fatalf("%d sweeps, want %d", got, want)
			}
			checkReading(t, a.Sweeps[0].Knee, c.Knee)
			checkReading(t, a.Sweeps[0].Cliff, c.Cliff)
			var tags []string
			for _, f := range a.Sweeps[0].TagCliffs {
				tags = append(tags, f.Text)
			}
			if got, want := strings.Join(tags, "\n"), strings.Join(c.TagCliffs, "\n"); got != want {
				t.Errorf("tag cliffs\n got %q\nwant %q", got, want)
			}
		})
	}
}

func checkReading(t *testing.T, f Finding, want reading) {
	t.Helper()
	if got := f.Text; got != want.Text {
		t.Errorf("%s text\n got %q\nwant %q", f.Kind, got, want.Text)
	}
	if f.Found != want.Found || f.Stage != want.Stage || f.Metric != want.Metric {
		t.Errorf("%s = found %v at %q by %q, want found %v at %q by %q", f.Kind, f.Found, f.Stage, f.Metric, want.Found, want.Stage, want.Metric)
	}
	if got := f.Tentative; got != want.Tentative {
		t.Errorf("%s tentative = %q, want %q", f.Kind, got, want.Tentative)
	}
	if got := f.Suspect; got != want.Suspect {
		t.Errorf("%s suspect = %q, want %q", f.Kind, got, want.Suspect)
	}
	switch {
	case want.Server == nil && f.Server != nil:
		t.Errorf("%s server = %+v, want none", f.Kind, *f.Server)
	case want.Server != nil && f.Server == nil:
		t.Errorf("%s server = none, want %+v", f.Kind, *want.Server)
	case want.Server != nil && (f.Server.Verdict != want.Server.Verdict || f.Server.Text != want.Server.Text):
		t.Errorf("%s server\n got %q %q\nwant %q %q", f.Kind, f.Server.Verdict, f.Server.Text, want.Server.Verdict, want.Server.Text)
	}
	if f.Rule == "" {
		t.Errorf("%s rule is empty", f.Kind)
	}
}
