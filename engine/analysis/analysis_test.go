package analysis

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
)

// sweep builds a closed-model sweep from parallel slices: loads, request
// rates and TTFT p99s (nil for none).
func sweep(loads, rates, ttft []float64) Sweep {
	s := Sweep{Scenario: "s", LoadUnit: UnitVUs}
	for i, l := range loads {
		p := Point{Stage: "c" + strconv.FormatFloat(l, 'g', -1, 64), Load: l, ReqPerSec: rates[i]}
		if ttft != nil {
			p.TTFTP99 = ttft[i]
		}
		s.Points = append(s.Points, p)
	}
	return s
}

func TestKnee(t *testing.T) {
	loads := []float64{1, 2, 4, 8, 16}
	tests := map[string]struct {
		rates     []float64
		wantFound bool
		wantStage string
		wantText  string
	}{
		"linear":            {[]float64{1, 2, 4, 8, 16}, false, "", "kept growing"},
		"saturating":        {[]float64{1, 1.9, 3.6, 4.0, 4.1}, true, "c4", "throughput knee at 4 VUs: 3.60 req/s"},
		"flat":              {[]float64{5, 5.1, 5.0, 5.2, 5.1}, true, "c1", "throughput flat from the first level: saturated at 1 VU"},
		"weak, then flat":   {[]float64{1, 1.3, 1.35, 1.36, 1.37}, false, "", "did not grow in proportion to load (from 2 VUs to 4 VUs)"},
		"noisy but growing": {[]float64{1, 1.4, 3.2, 5.1, 11}, false, "", "kept growing"},
		"declining after":   {[]float64{1, 2, 3.9, 3.5, 3.0}, true, "c4", "at 4 VUs"},
		"zero skipped":      {[]float64{1, 0, 3.8, 4.0, 4.1}, true, "c4", "at 4 VUs"},
		"all zero":          {[]float64{0, 0, 0, 0, 0}, false, "", "too few"},
		"late slow growth":  {[]float64{1, 1.05, 2, 4, 8}, false, "", "kept growing"},
		"growth then stall": {[]float64{1, 2, 2.1, 4, 8}, true, "c2", "at 2 VUs: 2.00 req/s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := Knee(sweep(loads, tc.rates, nil))
			if got, want := f.Found, tc.wantFound; got != want {
				t.Fatalf("Found = %v, want %v (%s)", got, want, f.Text)
			}
			if got, want := f.Stage, tc.wantStage; got != want {
				t.Errorf("Stage = %q, want %q", got, want)
			}
			if !strings.Contains(f.Text, tc.wantText) {
				t.Errorf("Text = %q, want it to contain %q", f.Text, tc.wantText)
			}
			if got, want := f.Kind, KindKnee; got != want {
				t.Errorf("Kind = %q, want %q", got, want)
			}
			if f.Rule == "" {
				t.Error("Rule is empty")
			}
		})
	}
}

func TestCliff(t *testing.T) {
	loads := []float64{1, 2, 4, 8}
	tests := map[string]struct {
		ttft, e2e  []float64
		slo        plan.SLO
		wantStage  string // "" = not found
		wantMetric string
		wantText   string
	}{
		"by growth":            {[]float64{50, 60, 80, 900}, nil, plan.SLO{}, "c8", "ttft_p99", "TTFT cliff at 8 VUs: p99 ×11.2 for ×2 load (80 ms → 900 ms): the tail breaks away"},
		"smooth growth":        {[]float64{50, 100, 200, 400}, nil, plan.SLO{}, "", "ttft_p99", "no latency cliff"},
		"doubling not fast":    {[]float64{50, 60, 130, 250}, nil, plan.SLO{}, "", "ttft_p99", "no latency cliff"},
		"zero skipped":         {[]float64{50, 0, 60, 1300}, nil, plan.SLO{}, "c8", "ttft_p99", "1.3 s"},
		"by SLO":               {[]float64{50, 60, 300, 900}, nil, plan.SLO{TTFT: 250 * time.Millisecond}, "c4", "ttft_p99", "TTFT cliff at 4 VUs: p99 300 ms breaks the SLO of 250 ms"},
		"SLO never broken":     {[]float64{50, 60, 90, 150}, nil, plan.SLO{TTFT: 10 * time.Second}, "", "ttft_p99", "stayed within the SLO"},
		"SLO met, growth read": {[]float64{50, 60, 300, 9000}, nil, plan.SLO{TTFT: 10 * time.Second}, "c4", "ttft_p99", "p99 ×5 for ×2 load (60 ms → 300 ms): the tail breaks away (p99 within the SLO)"},
		"E2E SLO":              {[]float64{50, 60, 70, 80}, []float64{1000, 1100, 2500, 4000}, plan.SLO{E2E: 2 * time.Second}, "c4", "e2e_p99", "E2E cliff at 4 VUs: p99 2.5 s breaks the SLO of 2 s"},
		"E2E growth":           {[]float64{50, 60, 70, 80}, []float64{1000, 1100, 1200, 12000}, plan.SLO{}, "c8", "e2e_p99", "E2E cliff at 8 VUs: p99 ×10 for ×2 load (1.2 s → 12 s): the tail breaks away"},
		"TPOT SLO only grows":  {[]float64{50, 60, 80, 900}, nil, plan.SLO{TPOT: time.Millisecond}, "c8", "ttft_p99", "cliff at 8 VUs"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := sweep(loads, []float64{1, 2, 3, 4}, tc.ttft)
			for i := range s.Points {
				if tc.e2e != nil {
					s.Points[i].E2EP99 = tc.e2e[i]
				}
			}
			f := Cliff(s, tc.slo)
			if got, want := f.Stage, tc.wantStage; got != want {
				t.Fatalf("Stage = %q, want %q (%s)", got, want, f.Text)
			}
			if got, want := f.Found, tc.wantStage != ""; got != want {
				t.Errorf("Found = %v, want %v", got, want)
			}
			if got, want := f.Metric, tc.wantMetric; got != want {
				t.Errorf("Metric = %q, want %q", got, want)
			}
			if !strings.Contains(f.Text, tc.wantText) {
				t.Errorf("Text = %q, want it to contain %q", f.Text, tc.wantText)
			}
		})
	}
}

func stage(scenario, name string, vus int, rate float64) metrics.StageSummary {
	return metrics.StageSummary{Scenario: scenario, Stage: name, VUs: vus, TargetRate: rate, ReqPerSec: float64(vus)}
}

func TestSweeps(t *testing.T) {
	tests := map[string]struct {
		stages []metrics.StageSummary
		want   string // scenario:unit:points, comma separated
	}{
		"two points":  {[]metrics.StageSummary{stage("a", "c1", 1, 0), stage("a", "c2", 2, 0)}, ""},
		"three":       {[]metrics.StageSummary{stage("a", "c1", 1, 0), stage("a", "c2", 2, 0), stage("a", "c4", 4, 0)}, "a:VUs:3"},
		"ramp down":   {[]metrics.StageSummary{stage("a", "c1", 1, 0), stage("a", "c4", 4, 0), stage("a", "c2", 2, 0)}, ""},
		"repeat load": {[]metrics.StageSummary{stage("a", "c1", 1, 0), stage("a", "c1b", 1, 0), stage("a", "c2", 2, 0)}, ""},
		"open model":  {[]metrics.StageSummary{stage("o", "r1", 0, 1), stage("o", "r2", 0, 2.5), stage("o", "r4", 0, 4)}, "o:req/s:3"},
		"mixed units": {[]metrics.StageSummary{stage("a", "c1", 1, 0), stage("a", "r2", 0, 2), stage("a", "c4", 4, 0)}, ""},
		"two scenarios": {[]metrics.StageSummary{stage("b", "c1", 1, 0), stage("a", "c1", 1, 0), stage("b", "c2", 2, 0),
			stage("a", "c2", 2, 0), stage("b", "c3", 3, 0)}, "b:VUs:3"},
		"zero VUs": {[]metrics.StageSummary{stage("a", "c0", 0, 0), stage("a", "c1", 1, 0), stage("a", "c2", 2, 0)}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range Sweeps(tc.stages) {
				got = append(got, s.Scenario+":"+s.LoadUnit+":"+strconv.Itoa(len(s.Points)))
			}
			if got, want := strings.Join(got, ","), tc.want; got != want {
				t.Errorf("Sweeps = %q, want %q", got, want)
			}
		})
	}
}

func TestThroughput(t *testing.T) {
	tests := map[string]struct {
		st   metrics.StageSummary
		want float64
	}{
		"closed, burst inflated": {metrics.StageSummary{VUs: 16, ReqPerSec: 6.5, E2E: metrics.Dist{Mean: 4000}}, 4},
		"closed, think time":     {metrics.StageSummary{VUs: 4, ReqPerSec: 1, E2E: metrics.Dist{Mean: 1000}}, 1},
		"open model":             {metrics.StageSummary{TargetRate: 5, ReqPerSec: 4.8, E2E: metrics.Dist{Mean: 9000}}, 4.8},
		"no latency":             {metrics.StageSummary{VUs: 4, ReqPerSec: 2}, 2},
		"nothing":                {metrics.StageSummary{}, 0},
	}
	for name, tc := range tests {
		if got, want := Throughput(tc.st), tc.want; got != want {
			t.Errorf("%s: Throughput = %v, want %v", name, got, want)
		}
	}
}

// TestRealSweep reads the stages of a real run against the built-in
// simulator (scenarios/chat_mix.lua, 4 s stages): throughput stops growing
// after 8 VUs while TTFT p50 jumps from 20 ms to 1.6 s at 16 (and p99
// from 93 ms to 2.1 s); 4 s stages are too short for reliable percentiles.
func TestRealSweep(t *testing.T) {
	data, err := os.ReadFile("testdata/r4.json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Stages []metrics.StageSummary `json:"stages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	a := Analyze(r.Stages, plan.SLO{}, Server{})
	if got, want := len(a.Sweeps), 1; got != want {
		t.Fatalf("%d sweeps, want %d", got, want)
	}
	sa := a.Sweeps[0]
	if got, want := sa.Knee.Text, "throughput knee at 8 VUs: 4.49 req/s delivered (8 VUs ÷ mean E2E 1.78 s; the table's 4.50 req/s counts requests started)"; got != want {
		t.Errorf("knee = %q, want %q", got, want)
	}
	if got, want := sa.Cliff.Text, "tentative TTFT cliff at 16 VUs: p50 ×81.4 for ×2 load (19.9 ms → 1.62 s): requests queue"; got != want {
		t.Errorf("cliff = %q, want %q", got, want)
	}
	slo := Analyze(r.Stages, plan.SLO{TTFT: 80 * time.Millisecond}, Server{})
	if got, want := slo.Sweeps[0].Cliff.Stage, "c8"; got != want {
		t.Errorf("cliff with a TTFT SLO of 80ms at %q, want %q", got, want)
	}
}

func TestSuspectFindings(t *testing.T) {
	busy := &engine.ClientCheck{MachineBusy: true, MachineReasons: []string{"other processes took the cores"}}
	bound := &engine.ClientCheck{Bound: true, Reasons: []string{"CPU at 195%"}}
	// A saturating sweep: knee at c4 (read from c4 and c8), TTFT cliff at
	// c16 (read from c8 and c16).
	stages := func(mod func(i int, s *metrics.StageSummary)) []metrics.StageSummary {
		var out []metrics.StageSummary
		for i, v := range []int{1, 2, 4, 8, 16} {
			s := metrics.StageSummary{Scenario: "s", Stage: "c" + strconv.Itoa(v), VUs: v, Complete: true, PlannedS: 20, DurationS: 20,
				ReqPerSec: []float64{1, 1.9, 3.6, 4.0, 4.1}[i], TTFT: metrics.Dist{P99: []float64{50, 55, 60, 80, 900}[i]}}
			if mod != nil {
				mod(i, &s)
			}
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name        string
		mod         func(i int, s *metrics.StageSummary)
		knee, cliff string // Suspect contains; "" = none
	}{
		{"clean", nil, "", ""},
		{"machine busy at the cliff", func(i int, s *metrics.StageSummary) {
			if s.Stage == "c16" {
				s.Client = busy
			}
		}, "", "c16: the machine was busy with other processes"},
		{"client-bound at the level after the knee", func(i int, s *metrics.StageSummary) {
			if s.Stage == "c8" {
				s.Client = bound
			}
		}, "c8: llmload itself was the bottleneck", "c8: llmload itself was the bottleneck"},
		{"window slipped at the knee", func(i int, s *metrics.StageSummary) {
			if s.Stage == "c4" {
				s.DurationS = 23
			}
		}, "c4: its window was 23.0 s, planned 20 s", ""},
		{"one reason, two stages, said once", func(i int, s *metrics.StageSummary) {
			if s.Stage == "c8" || s.Stage == "c16" {
				s.Client = busy
			}
		}, "c8: the machine was busy with other processes", "c8, c16: the machine was busy with other processes"},
		{"a cut stage is not a slip", func(i int, s *metrics.StageSummary) {
			if s.Stage == "c4" {
				s.DurationS, s.Complete = 3, false
			}
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(stages(tt.mod), plan.SLO{}, Server{})
			sa := a.Sweeps[0]
			if sa.Knee.Stage != "c4" || sa.Cliff.Stage != "c16" {
				t.Fatalf("knee %q cliff %q, want c4 and c16", sa.Knee.Stage, sa.Cliff.Stage)
			}
			for _, c := range []struct {
				f    Finding
				want string
			}{{sa.Knee, tt.knee}, {sa.Cliff, tt.cliff}} {
				if (c.want == "") != (c.f.Suspect == "") || !strings.Contains(c.f.Suspect, c.want) {
					t.Errorf("%s suspect = %q, want %q", c.f.Kind, c.f.Suspect, c.want)
				}
			}
		})
	}
}

func TestKneeNamesItsFigure(t *testing.T) {
	tests := []struct {
		name string
		st   metrics.StageSummary
		want string
	}{
		{"bounded by VUs / mean E2E", metrics.StageSummary{VUs: 8, ReqPerSec: 4.58, E2E: metrics.Dist{Mean: 1830}},
			"4.37 req/s delivered (8 VUs ÷ mean E2E 1.83 s; the table's 4.58 req/s counts requests started)"},
		{"req/s", metrics.StageSummary{VUs: 8, ReqPerSec: 4, E2E: metrics.Dist{Mean: 1000}}, "4.00 req/s (the table's req/s)"},
		{"open model", metrics.StageSummary{TargetRate: 5, ReqPerSec: 4.8, E2E: metrics.Dist{Mean: 9000}}, "4.80 req/s (the table's req/s)"},
	}
	for _, tt := range tests {
		if got := figureText(pointOf(tt.st)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAnalyzeNoSweep(t *testing.T) {
	a := Analyze(nil, plan.SLO{}, Server{})
	if a.Sweeps == nil || len(a.Sweeps) != 0 {
		t.Errorf("Sweeps = %#v, want empty and non-nil", a.Sweeps)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"sweeps":[]}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}
