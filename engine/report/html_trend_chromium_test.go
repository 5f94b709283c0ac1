package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trendConsoleLine is how Chromium, run with --enable-logging=stderr, logs a
// page's console message: `[...:INFO:CONSOLE:1] "Error: <circle> attribute
// cx: Expected length, "NaN".", source: file:///...`. The trend page has no
// script, so any such line is the browser complaining about the markup.
var trendConsoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// TestTrendHTMLInChromium loads the trend page, with the edge cases'
// charts after the representative ones, in headless Chromium and checks
// the DOM it built: every chart's SVG with one dot per drawable run and one
// line per change point, the hostile text as text, and a silent console. A control page with a NaN coordinate first proves that the
// console is read at all.
func TestTrendHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not installed: .ci/run installs Debian's chromium package")
		}
		t.Skip("chromium not installed: apt-get install chromium")
	}
	dir := t.TempDir()
	control := `<!DOCTYPE html><html><body><svg viewBox="0 0 9 9"><circle cx="NaN" cy="1" r="1"/></svg></body></html>`
	if _, console := loadTrendInChromium(t, bin, dir, "control.html", []byte(control)); !strings.Contains(console, "NaN") {
		t.Fatalf("Chromium logged nothing for a NaN coordinate, so its console cannot be checked:\n%s", console)
	}
	cases := append([]trendCase{{"ttft", TrendChart{}, 12, 1}, {"req/s", TrendChart{}, 8, 1}, {"errors", TrendChart{}, 3, 0},
		{"empty", TrendChart{}, 0, 0}}, trendEdges()...)
	p := trendFixture()
	for i := range p.Charts {
		cases[i].chart = p.Charts[i]
	}
	p.Charts = nil
	for _, c := range cases {
		p.Charts = append(p.Charts, c.chart)
	}
	dom, console := loadTrendInChromium(t, bin, dir, "trend.html", render(t, TrendHTML(p)))
	if console != "" {
		t.Errorf("console messages:\n%s", console)
	}
	for i, c := range cases {
		svg := regexp.MustCompile(`(?s)<svg[^>]*data-chart="trend-` + strconv.Itoa(i) + `".*?</svg>`).FindString(dom)
		if svg == "" {
			t.Errorf("%s: rendered DOM has no chart", c.name)
			continue
		}
		if got := strings.Count(svg, `class="dot"`); got != c.dots {
			t.Errorf("%s: %d dots, want %d", c.name, got, c.dots)
		}
		if got := strings.Count(svg, `class="mark change`); got != c.shifts {
			t.Errorf("%s: %d change marks, want %d", c.name, got, c.shifts)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "+6.1% at run 38", "No runs: nothing to chart."} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, "<script") {
		t.Error("rendered DOM holds a script element")
	}
}

// loadTrendInChromium writes page to dir/name and loads it headless, offline
// and without a profile, returning the DOM it built and the console
// messages it logged. The screenshot taken in the same run makes Chromium
// lay the page out and paint it; it must not come out blank.
func loadTrendInChromium(t *testing.T, bin, dir, name string, page []byte) (dom, console string) {
	t.Helper()
	path, shot := filepath.Join(dir, name), filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile-"+name), "--enable-logging=stderr",
		"--dump-dom", "--screenshot="+shot, "--window-size=1200,3000", "file://"+path)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", name, err, errOut.String())
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 1000 {
		t.Errorf("%s: screenshot missing or empty: %v", name, err)
	}
	if out := os.Getenv("LLMLOAD_TREND_SHOT"); out != "" && name == "trend.html" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
	return out.String(), strings.Join(trendConsoleLine.FindAllString(errOut.String(), -1), "\n")
}
