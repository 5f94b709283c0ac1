package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
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
	Knee       reading    `json:"knee"`
	Cliff      reading    `json:"cliff"`
	TagCliffs  []string   `json:"tag_cliffs"` // texts of the per-tag cliffs
}

// reading is the expected Finding.
type reading struct {
	Found     bool   `json:"found"`
	Stage     string `json:"stage"`
	Metric    string `json:"metric"`
	Text      string `json:"text"`
	Tentative string `json:"tentative"`
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

// stages turns a case into the stage summaries Analyze reads.
func (c corpusCase) stages(t *testing.T) []metrics.StageSummary {
	t.Helper()
	if c.File != "" {
		data, err := os.ReadFile(filepath.Join("testdata", c.File))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Stages []metrics.StageSummary `json:"stages"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return r.Stages
	}
	var out []metrics.StageSummary
	for i, l := range c.Load {
		st := metrics.StageSummary{Scenario: "s", Stage: "c" + strconv.FormatFloat(l, 'g', -1, 64), VUs: int(l), ReqPerSec: c.ReqPerSec[i]}
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
		}
		out = append(out, st)
	}
	return out
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
			slo := engine.SLO{TTFT: time.Duration(c.SLOTTFTMS * float64(time.Millisecond))}
			a := Analyze(c.stages(t), slo)
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
	if f.Rule == "" {
		t.Errorf("%s rule is empty", f.Kind)
	}
}
