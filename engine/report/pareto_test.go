package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/analysis"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/result"
)

// paretoSweep is a closed-model sweep whose per-user speed falls as total
// throughput grows up to 8 VUs; 16 VUs is slower per user and no busier
// (below the front), 32 VUs failed every request, and only 1 to 4 VUs
// kept 99% of their requests within the SLO.
func paretoSweep() []metrics.StageSummary {
	levels := []struct {
		vus       int
		tpot, tok float64
		good      float64
		failed    bool
	}{
		{1, 12.5, 80, 1, false}, {2, 13.3, 150, 1, false}, {4, 16, 250, 0.995, false},
		{8, 24.3, 329, 0.91, false}, {16, 50, 320, 0.4, false}, {32, 0, 0, 0, true},
	}
	var out []metrics.StageSummary
	for i, l := range levels {
		s := metrics.StageSummary{Scenario: "sweep", Stage: fmt.Sprintf("c%d", l.vus), Index: i, VUs: l.vus,
			DurationS: 60, Requests: 120, OK: 120, OutputTokens: int64(l.tok * 60), OutputTokPerSec: l.tok,
			TPOT: metrics.Dist{Count: 120, P50: l.tpot}, GoodShare: l.good}
		if l.failed {
			s.OK, s.Failed, s.OutputTokens = 0, 120, 0
		}
		out = append(out, s)
	}
	return out
}

var paretoSLO = plan.SLO{TTFT: time.Second, TPOT: 50 * time.Millisecond}

func paretoFronts(gpus int) []analysis.ParetoFront {
	return analysis.Pareto(paretoSweep(), paretoSLO, gpus)
}

func TestParetoTextGolden(t *testing.T) {
	for name, gpus := range map[string]int{"pareto": 0, "pareto-gpus": 2} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			writePareto(&b, paretoFronts(gpus))
			golden(t, name+".txt.golden", trimLines(b.Bytes()))
		})
	}
}

func TestParetoHTMLGolden(t *testing.T) {
	for name, gpus := range map[string]int{"pareto": 0, "pareto-gpus": 2} {
		t.Run(name, func(t *testing.T) {
			svg := string(paretoChart(paretoFronts(gpus)[0], 0).SVG)
			golden(t, name+".svg.golden", []byte(svg+"\n"))
			var doc struct{}
			if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
				t.Errorf("the chart is not well-formed XML: %v", err)
			}
		})
	}
}

func TestParetoHTMLChart(t *testing.T) {
	svg := string(paretoChart(paretoFronts(0)[0], 0).SVG)
	for _, want := range []string{
		`<title>sweep: output tok/s per user against output tok/s in all</title>`,
		`<desc>5 stages; on the Pareto front: c1, c2, c4, c8; below it: c16. Best meeting the SLO: c4 (4 VUs)`,
		`>output tok/s per user (1000 / TPOT p50)</text>`, `>output tok/s in all</text>`,
		`<circle class="best"`, `>c16</text>`,
		`c16 (16 VUs): 20.0 tok/s/user × 320 tok/s, below the front (c8 beats it on both), 40.0% within the SLO`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if got := strings.Count(svg, `<circle class="dot"`); got != 5 {
		t.Errorf("%d points, want 5 (the failed stage places none)", got)
	}
	if got := strings.Count(svg, `<path class="series"`); got != 1 {
		t.Errorf("%d front lines, want 1", got)
	}
	// The front runs from the fastest per user (c1, left) to the busiest
	// (c8, right): x grows along the path.
	path := regexp.MustCompile(`<path class="series" d="M([^"]+)"`).FindStringSubmatch(svg)[1]
	prev := -1.0
	for _, pt := range strings.Split(path, " L") {
		var x, y float64
		if _, err := fmt.Sscanf(pt, "%g,%g", &x, &y); err != nil {
			t.Fatalf("point %q: %v", pt, err)
		}
		if x <= prev {
			t.Errorf("front path %q does not run left to right", path)
		}
		prev = x
	}
}

func TestParetoPerGPUAxis(t *testing.T) {
	svg := string(paretoChart(paretoFronts(2)[0], 0).SVG)
	if !strings.Contains(svg, `>output tok/s per GPU (2 GPUs)</text>`) || !strings.Contains(svg, "(164 tok/s/GPU)") {
		t.Errorf("with 2 GPUs the y axis is not per GPU:\n%s", svg)
	}
}

func TestParetoShownOnlyForTradeOffs(t *testing.T) {
	one := paretoSweep()
	for i := range one[1:] {
		one[i+1].OK, one[i+1].Failed = 0, 120
	}
	tests := map[string]struct {
		stages []metrics.StageSummary
		want   bool
	}{
		"sweep":              {paretoSweep(), true},
		"one point":          {one, false},
		"no sweep":           {paretoSweep()[:2], false},
		"no stage at all":    {nil, false},
		"escaped stage name": {renamed(paretoSweep(), "<b>c1</b>"), true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := result.New(result.Meta{Complete: true, SLO: result.SLOFrom(paretoSLO)}, &metrics.Summary{Stages: tc.stages, SLOSet: true})
			text := string(render(t, Text(r)))
			page := string(render(t, HTML(r)))
			if got := strings.Contains(text, "Pareto front of sweep"); got != tc.want {
				t.Errorf("text shows the front: %v, want %v", got, tc.want)
			}
			if got := strings.Contains(page, "<h2>Pareto front: sweep</h2>"); got != tc.want {
				t.Errorf("HTML shows the front: %v, want %v", got, tc.want)
			}
			if strings.Contains(page, "<b>c1</b>") {
				t.Error("a stage name reached the page unescaped")
			}
		})
	}
}

func renamed(stages []metrics.StageSummary, first string) []metrics.StageSummary {
	stages[0].Stage = first
	return stages
}

// TestParetoRecordedLlamaCpp reads a real sweep of llama.cpp with 4
// slots: 1 VU is fastest per user, 16 VUs deliver the most, 4 and 8 VUs
// are below the front; the file has no SLO.
func TestParetoRecordedLlamaCpp(t *testing.T) {
	r := readTestdata(t, "llamacpp-sweep-4slots.json")
	text := string(render(t, Text(r)))
	for _, want := range []string{
		"Pareto front of sweep: output tok/s per user against output tok/s in all",
		"c1     1 VU           912    410  on it",
		"c4     4 VUs         186*    390  below: c1 beats it on both",
		"c16    16 VUs        167*    600  on it",
		"best meeting the SLO: no SLO set",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	page := string(render(t, HTML(r)))
	if !strings.Contains(page, `data-chart="pareto-0"`) {
		t.Error("page lacks the Pareto chart")
	}
}
