package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/servermetrics"
)

// curveOf is a closed sweep's server curve from level means; nil means
// no gauge, a NaN level no scrape in its window.
func curveOf(loads, waiting, running []float64) *ServerCurve {
	c := &ServerCurve{}
	if waiting != nil {
		c.Waiting = "w"
	}
	if running != nil {
		c.Running = "r"
	}
	for i, l := range loads {
		lv := ServerLevel{Stage: "c" + gaugeText(l), Load: l}
		if waiting != nil && !math.IsNaN(waiting[i]) {
			lv.Waiting = &waiting[i]
		}
		if running != nil && !math.IsNaN(running[i]) {
			lv.Running = &running[i]
		}
		c.Levels = append(c.Levels, lv)
	}
	return c
}

func TestServerCheck(t *testing.T) {
	loads := []float64{1, 2, 4, 8}
	tests := []struct {
		name             string
		waiting, running []float64
		kind, at, metric string // at: the finding's stage, "" for none found
		verdict, text    string // text "" expects no check at all
	}{
		{"cliff by a full batch", []float64{0, 0, 0, 0.2}, []float64{1, 2, 3.9, 4}, KindCliff, "c8", "ttft_p50", ServerAgrees,
			"running at a plateau from 8 VUs (r 3.9 → 4), queue flat (w ≤ 0.2 at every level)"},
		{"cliff before the queue", []float64{0, 0, 0, 5}, []float64{1, 2, 4, 8}, KindCliff, "c4", "ttft_p50", ServerDisagrees,
			"queue grows only from 8 VUs (w 0 → 5) and running not at a plateau (r 1 → 4): the delay may be client-side or in the network"},
		{"a tail before the queue", []float64{0, 0, 0, 5}, []float64{1, 2, 4, 8}, KindCliff, "c4", "ttft_p99", "",
			"queue grows only from 8 VUs (w 0 → 5) and running not at a plateau (r 1 → 4): a tail of a few waiting requests need not show in the mean queue"},
		{"E2E, server calm", []float64{0, 0, 0, 0}, []float64{1, 2, 4, 8}, KindCliff, "c8", "e2e_p50", "",
			"queue empty (w 0 at every level) and running not at a plateau (r 1 → 8): E2E grows in decode too, which a queue does not show"},
		{"queue from the first level", []float64{2, 4, 8, 16}, []float64{1, 1, 1, 1}, KindCliff, "c2", "ttft_p50", ServerAgrees,
			"queue from the first level (w 2 at 1 VU)"},
		{"knee, the server never saturates", []float64{0, 0, 0, 0}, []float64{1, 2, 4, 8}, KindKnee, "c2", "", ServerDisagrees,
			"queue empty (w 0 at every level) and running not at a plateau (r 1 → 8): throughput may be limited client-side or in the network"},
		{"knee, a plateau the level after", nil, []float64{1, 2, 4, 4.1}, KindKnee, "c4", "", ServerAgrees,
			"running at a plateau from 8 VUs (r 4 → 4.1)"},
		{"knee, a plateau much later", nil, []float64{1, 2, 4, 4.1}, KindKnee, "c1", "", "",
			"running at a plateau from 8 VUs (r 4 → 4.1)"},
		{"running only, no cliff", nil, []float64{1, 2, 4, 8}, KindCliff, "", "", "", ""},
		{"a level without scrapes is skipped", []float64{0, nan, 3, 3}, []float64{1, nan, 4, 4}, KindCliff, "c4", "ttft_p50", ServerAgrees,
			"queue grows from 4 VUs (w 0 → 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Finding{Kind: tt.kind, Found: tt.at != "", Stage: tt.at, Metric: tt.metric}
			got := curveOf(loads, tt.waiting, tt.running).check(f, UnitVUs)
			if tt.text == "" {
				if got != nil {
					t.Fatalf("check = %+v, want none", *got)
				}
				return
			}
			if got == nil {
				t.Fatal("check = none")
			}
			if got.Verdict != tt.verdict || got.Text != tt.text {
				t.Errorf("check\n got %q %q\nwant %q %q", got.Verdict, got.Text, tt.verdict, tt.text)
			}
		})
	}
}

var nan = math.NaN()

// TestServerCurve: the gauges are read over each stage's window measured
// from the run's start, the origin of the scraper's times.
func TestServerCurve(t *testing.T) {
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	var stages []metrics.StageSummary
	for i, vus := range []int{1, 2, 4} {
		st := metrics.StageSummary{Scenario: "s", Stage: "c" + gaugeText(float64(vus)), VUs: vus, ReqPerSec: float64(vus),
			Start: start.Add(time.Duration(30+10*i) * time.Second)}
		st.End = st.Start.Add(10 * time.Second)
		stages = append(stages, st)
	}
	s := Sweeps(stages)[0]
	deferred := servermetrics.Series{Name: "llamacpp:requests_deferred", T: []float64{5, 32, 38, 45, 55, 65}, V: []float64{9, 0, 1, 2, 4, 9}}
	tests := []struct {
		name   string
		server Server
		want   string // waiting means by level, "-" for none; "" for no curve
	}{
		{"by window", Server{&servermetrics.Result{Series: []servermetrics.Series{deferred}}, start}, "0.5 2 4"},
		{"no start, no curve", Server{Metrics: &servermetrics.Result{Series: []servermetrics.Series{deferred}}}, ""},
		{"no queue gauge", Server{&servermetrics.Result{Series: []servermetrics.Series{{Name: "vllm:kv_cache_usage_perc", T: []float64{35}, V: []float64{1}}}}, start}, ""},
		{"no scrape within any window", Server{&servermetrics.Result{Series: []servermetrics.Series{{Name: deferred.Name, T: []float64{5, 90}, V: []float64{1, 1}}}}, start}, ""},
		{"not scraped", Server{Start: start}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.server.curve(s, stages)
			var got []string
			if c != nil {
				for _, l := range c.Levels {
					v := "-"
					if l.Waiting != nil {
						v = gaugeText(*l.Waiting)
					}
					got = append(got, v)
				}
			}
			if got := strings.Join(got, " "); got != tt.want {
				t.Errorf("waiting = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestServerInJSON: a finding's server check and the sweep's curve are in
// the result file.
func TestServerInJSON(t *testing.T) {
	var c corpusCase
	for _, cc := range loadCorpus(t) {
		if cc.Name == "server corroborates the cliff (llama.cpp-like)" {
			c = cc
		}
	}
	stages, server := c.stages(t)
	b, err := json.Marshal(Analyze(stages, c.slo(), server))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"server":{"verdict":"agrees","text":"queue grows from 8 VUs (llamacpp:requests_deferred 0 → 3.9)","stage":"c8","series":"llamacpp:requests_deferred","from":0,"to":3.9}`,
		`"server":{"waiting":"llamacpp:requests_deferred","running":"llamacpp:requests_processing","levels":[{"stage":"c1","load":1,"waiting":0,"running":1}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}
