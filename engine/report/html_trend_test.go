package report

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trendRuns are n runs an hour apart whose values step from before to
// after at run shift, each with an interval of ±2%.
func trendRuns(n, shift int, before, after float64) []TrendRun {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var out []TrendRun
	for i := range n {
		v := before
		if i >= shift {
			v = after
		}
		v *= 1 + 0.003*float64(i%3-1) // a little noise, deterministic
		out = append(out, TrendRun{ID: strconv.Itoa(31 + i), Time: start.Add(time.Duration(i) * time.Hour),
			Label: "c0ffee" + strconv.Itoa(i), Value: v, Lo: v * 0.98, Hi: v * 1.02})
	}
	return out
}

// trendFixture is a representative page: a latency that got worse, a
// throughput that got better, a short history with a hostile label and
// stage name, and a chart with no runs.
func trendFixture() TrendPage {
	ttft := TrendChart{Metric: "ttft.p99", Stage: "chat/steady", Unit: "ms", HigherBad: true,
		Runs:    trendRuns(12, 7, 410, 435),
		Changes: []TrendChange{{Index: 7, Before: 410, After: 435, RelChange: 25.0 / 410, Worse: true}}}
	ttft.Runs[3].Lo, ttft.Runs[3].Hi = math.NaN(), math.NaN()
	ttft.Runs[5].Label = "<script>alert(1)</script>"
	rps := TrendChart{Metric: "req/s", Stage: "chat/steady", Unit: "req/s",
		Runs:    trendRuns(8, 3, 50, 56),
		Changes: []TrendChange{{Index: 3, Before: 50, After: 56, RelChange: 0.12}}}
	short := TrendChart{Metric: "errors.rate", Stage: "chat/<b>burst</b>", Unit: "%", HigherBad: true,
		Runs: trendRuns(3, 3, 0.5, 0.5), Note: "fewer than 6 runs: no change check"}
	return TrendPage{
		Title:     "llmload history — scenarios/chat_mix.lua",
		Generated: time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC),
		Filters:   []string{"branch=main", "last 30 runs"},
		Charts:    []TrendChart{ttft, rps, short, {Metric: "tpot.p50", Stage: "chat/steady", Unit: "ms", HigherBad: true}},
	}
}

func TestTrendHTMLGolden(t *testing.T) {
	golden(t, "trend_page.html.golden", render(t, TrendHTML(trendFixture())))
}

func TestTrendHTMLContent(t *testing.T) {
	page := string(render(t, TrendHTML(trendFixture())))
	for _, want := range []string{
		"<title>llmload history — scenarios/chat_mix.lua</title>", "branch=main; last 30 runs",
		`data-chart="trend-0"`, `data-chart="trend-3"`, "+6.1% at run 38", "+12.0% at run 34",
		// html/template writes the tables' + as &#43;; the SVG, escaped by hand, keeps it.
		"ttft.p99 · chat/steady: &#43;6.1% at run 38", "&#43;6.1% (worse)", "&#43;12.0% (better)",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "chat/&lt;b&gt;burst&lt;/b&gt;", "fewer than 6 runs",
		"No runs: nothing to chart.", "Lower is better.", "Higher is better.", "svg.chart .plot{",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<b>", "ZgotmplZ", "NaN", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if got, want := strings.Count(page, `<td class="bad">`), 1; got != want {
		t.Errorf("%d cells marked bad, want %d (the one shift for the worse)", got, want)
	}
}

func TestTrendHTMLNoCharts(t *testing.T) {
	page := string(render(t, TrendHTML(TrendPage{})))
	for _, want := range []string{"<title>llmload history</title>", "No charts", "<dd>none</dd>", "</html>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// trendCase is a chart with the dots and change lines it must draw.
type trendCase struct {
	name         string
	chart        TrendChart
	dots, shifts int
}

// trendEdges are charts whose values try to break the drawing.
func trendEdges() []trendCase {
	nan, inf := math.NaN(), math.Inf(1)
	run := func(v, lo, hi float64) TrendRun { return TrendRun{ID: "r", Value: v, Lo: lo, Hi: hi} }
	return []trendCase{
		{"no runs", TrendChart{Metric: "m", Changes: []TrendChange{{Index: 0}}}, 0, 0},
		{"one run", TrendChart{Runs: []TrendRun{run(5, 4, 6)}}, 1, 0},
		{"all equal", TrendChart{Runs: []TrendRun{run(7, 7, 7), run(7, 7, 7), run(7, 7, 7)}}, 3, 0},
		{"all zero", TrendChart{Runs: []TrendRun{run(0, 0, 0), run(0, nan, nan)}}, 2, 0},
		{"not finite", TrendChart{Runs: []TrendRun{run(nan, nan, nan), run(inf, 1, 2), run(-inf, nan, 3), run(4, nan, nan)}}, 1, 0},
		{"none finite", TrendChart{Runs: []TrendRun{run(nan, nan, nan), run(inf, inf, inf)}}, 0, 0},
		{"huge range", TrendChart{Runs: []TrendRun{run(math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64), run(-1e308, 0, 1), run(1e-300, 0, 1e-300)}}, 3, 0},
		{"near equal big", TrendChart{Runs: []TrendRun{run(1e20, 1e20, 1e20), run(math.Nextafter(1e20, 2e20), nan, nan)}}, 2, 0},
		{"subnormal", TrendChart{Runs: []TrendRun{run(5e-324, 0, 1e-310), run(1e-310, 5e-324, 5e-324), run(1e-322, 1e-322, 1e-322)}}, 3, 0},
		{"tiny", TrendChart{Runs: []TrendRun{run(1e-300, 0.9e-300, 1.1e-300), run(1.2e-300, nan, nan)}}, 2, 0},
		{"negative", TrendChart{Runs: []TrendRun{run(-5, -6, -4), run(-50, -40, -60)}}, 2, 0},
		{"bad changes", TrendChart{Runs: []TrendRun{run(1, nan, nan), run(2, nan, nan)},
			Changes: []TrendChange{{Index: -1}, {Index: 2}, {Index: 1, RelChange: nan, Worse: true}, {Index: 0, RelChange: inf}}}, 2, 2},
		{"hostile text", TrendChart{Metric: `"><script>`, Stage: "</svg>", Unit: "&",
			Runs:    []TrendRun{{ID: `<script>alert("x")</script>`, Label: "]]>&amp;", Value: 1, Lo: nan, Hi: 1}, run(2, 1, 3)},
			Changes: []TrendChange{{Index: 1, RelChange: 1}}}, 2, 1},
		{"many runs", TrendChart{Runs: trendRuns(500, 250, 100, 90), Changes: []TrendChange{{Index: 250, RelChange: -0.1}}}, 500, 1},
	}
}

// TestTrendChartEdges: whatever the values, each chart is well-formed
// SVG with finite coordinates, one dot per finite value and one line per
// change point that names a run.
func TestTrendChartEdges(t *testing.T) {
	for _, c := range trendEdges() {
		t.Run(c.name, func(t *testing.T) {
			svg := string(trendChartOut(c.chart, 0).SVG)
			checkTrendSVG(t, svg)
			if got := strings.Count(svg, `class="dot"`); got != c.dots {
				t.Errorf("%d dots, want %d", got, c.dots)
			}
			if got := strings.Count(svg, `class="mark change`); got != c.shifts {
				t.Errorf("%d change marks, want %d", got, c.shifts)
			}
			page := string(render(t, TrendHTML(TrendPage{Charts: []TrendChart{c.chart}})))
			if strings.Contains(page, "<script") || strings.Contains(page, "NaN") {
				t.Error("page holds raw <script> or NaN")
			}
		})
	}
}

// TestTrendChartRandom: charts of values drawn from every scale and every
// special value are well-formed SVG with finite coordinates.
func TestTrendChartRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.MaxFloat64, -math.MaxFloat64, 5e-324, 1e-310}
	value := func() float64 {
		if rng.IntN(4) == 0 {
			return special[rng.IntN(len(special))]
		}
		return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(640)-320))
	}
	for range 200 {
		var c TrendChart
		for range rng.IntN(8) {
			c.Runs = append(c.Runs, TrendRun{Value: value(), Lo: value(), Hi: value()})
		}
		c.Changes = []TrendChange{{Index: rng.IntN(9) - 1, RelChange: value(), Worse: rng.IntN(2) == 0}}
		checkTrendSVG(t, string(trendChartOut(c, 0).SVG))
		if t.Failed() {
			t.Fatalf("chart %+v", c)
		}
	}
}

// trendCoordAttrs are the SVG attributes that hold numbers.
var trendCoordAttrs = map[string]bool{"x": true, "y": true, "x1": true, "x2": true, "y1": true, "y2": true,
	"cx": true, "cy": true, "r": true, "width": true, "height": true, "dx": true}

// trendPathTokens are the numbers of a path's d attribute.
var trendPathTokens = regexp.MustCompile(`[-+]?[0-9.]+(e[-+]?[0-9]+)?|[A-Za-z]+`)

// checkTrendSVG fails t unless svg is well-formed XML whose coordinates are all
// finite numbers.
func checkTrendSVG(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v\n%s", err, svg)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		for _, a := range el.Attr {
			checkTrendAttr(t, el.Name.Local, a)
		}
	}
}

func checkTrendAttr(t *testing.T, el string, a xml.Attr) {
	t.Helper()
	var nums []string
	switch {
	case trendCoordAttrs[a.Name.Local]:
		nums = []string{a.Value}
	case el == "path" && a.Name.Local == "d":
		for _, f := range trendPathTokens.FindAllString(a.Value, -1) {
			if f != "M" && f != "L" && f != "V" && f != "H" {
				nums = append(nums, f)
			}
		}
	}
	for _, s := range nums {
		if v, err := strconv.ParseFloat(s, 64); err != nil || !finite(v) {
			t.Errorf("<%s %s=%q>: %q is not a finite number", el, a.Name.Local, a.Value, s)
		}
	}
}

func TestTrendRange(t *testing.T) {
	for _, c := range []struct{ lo, hi, wantLo, wantHi float64 }{
		{math.Inf(1), math.Inf(-1), 0, 1}, // no values
		{0, 0, 0, 1},
		{400, 500, 390, 510},
		{5, 100, 0, 109.5}, // would dip below zero: clamped
		{-10, 10, -12, 12},
		{100, 100, 94, 106}, // flat: ±5%, then padded
	} {
		lo, hi := trendRange(c.lo, c.hi)
		if math.Abs(lo-c.wantLo) > 1e-9 || math.Abs(hi-c.wantHi) > 1e-9 {
			t.Errorf("trendRange(%g, %g) = %g, %g, want %g, %g", c.lo, c.hi, lo, hi, c.wantLo, c.wantHi)
		}
	}
}

// TestTrendYTicks: the y tick labels of very large and very close values
// stay short and distinct, the axis scaled by a power of ten.
func TestTrendYTicks(t *testing.T) {
	tick := regexp.MustCompile(`<text class="tick" x="58"[^>]*>([^<]*)</text>`)
	for _, c := range []struct {
		vals  []float64
		label string
	}{
		{[]float64{410, 435}, "m (ms)"},
		{[]float64{1e20, math.Nextafter(1e20, 2e20)}, "m (ms ×1e18)"},
		{[]float64{-1e308, math.MaxFloat64}, "m (ms ×1e298)"},
		{[]float64{0.5, 0.5008}, "m (ms ×1e-3)"},
		{[]float64{1e-300, 1.2e-300}, "m (ms ×1e-302)"},
	} {
		ch := TrendChart{Metric: "m", Unit: "ms"}
		for _, v := range c.vals {
			ch.Runs = append(ch.Runs, TrendRun{Value: v, Lo: math.NaN(), Hi: math.NaN()})
		}
		svg := string(trendChartOut(ch, 0).SVG)
		if !strings.Contains(svg, ">"+c.label+"<") {
			t.Errorf("%g: no y label %q:\n%s", c.vals, c.label, svg)
		}
		seen := map[string]bool{}
		for _, m := range tick.FindAllStringSubmatch(svg, -1) {
			if len(m[1]) > 6 || seen[m[1]] {
				t.Errorf("%g: tick label %q too long or repeated", c.vals, m[1])
			}
			seen[m[1]] = true
		}
		if len(seen) < 2 {
			t.Errorf("%g: %d y ticks", c.vals, len(seen))
		}
	}
}

func TestTrendValue(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 435.4: "435", 56.25: "56.2", 0.5: "0.50", 0.0012: "0.0012", 1.5e7: "1.5e+07",
		math.Inf(1): "+∞", math.Inf(-1): "-∞", -12.34: "-12.3",
	} {
		if got := trendValue(v); got != want {
			t.Errorf("trendValue(%g) = %q, want %q", v, got, want)
		}
	}
	if got := trendValue(math.NaN()); got != "-" {
		t.Errorf("trendValue(NaN) = %q, want -", got)
	}
}
