package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestE2ETraceReport runs scenarios/trace_replay.lua's first 60 records
// at a fifth of their pace on the built-in simulator, whose prefix cache
// reports cached tokens, and finds the replay in every output: the
// summary's trace block with both prefix reuses, the result's traces, the
// HTML report's section and arrivals chart, and the plan of llmload check.
func TestE2ETraceReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary for 7 s")
	}
	dir := t.TempDir()
	out, html := filepath.Join(dir, "trace.json"), filepath.Join(dir, "trace.html")
	args := []string{"../../scenarios/trace_replay.lua", "--set", "speedup=0.2", "--set", "limit=60"}
	stdout, stderr, code := runBinary(t, nil, append([]string{"run", "--out", out, "--html", html, "-q"}, args...)...)
	if code != exitOK {
		t.Fatalf("run exited %d:\n%s\n%s", code, stdout, stderr)
	}
	head := regexp.MustCompile(`(?m)^replay  data/trace_mooncake\.jsonl \(mooncake\), 60 records over [\d.]+ s at 0\.2×, replayed in [\d.]+ s \(digest [0-9a-f]{16}\)$`)
	if !head.MatchString(stdout) {
		t.Errorf("summary lacks the trace headline:\n%s", stdout)
	}
	for _, want := range []string{"slice: the first 60 records (limit)", "input tokens", "output tokens", "cache hit"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	reuse := regexp.MustCompile(`prefix reuse: trace ([\d.]+)% \(an infinite cache\) · server ([\d.]+)% \(cached_tokens of usage\)`).FindStringSubmatch(stdout)
	if reuse == nil {
		t.Fatalf("summary lacks the prefix reuse line:\n%s", stdout)
	}
	traceShare, _ := strconv.ParseFloat(reuse[1], 64)
	serverShare, _ := strconv.ParseFloat(reuse[2], 64)
	// The simulator caches 16-token blocks as the trace's hash ids do, so
	// it serves some prefixes, and never more than a cache that forgets
	// nothing (bar its last-token rule, which only lowers its share).
	if traceShare <= 0 || serverShare <= 0 || serverShare > traceShare {
		t.Errorf("prefix reuse: trace %.1f%%, server %.1f%%; want both above 0, the server's at most the trace's", traceShare, serverShare)
	}

	res, err := readResult(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 1 {
		t.Fatalf("result traces = %+v, want one", res.Traces)
	}
	tr := res.Traces[0]
	if tr.Scenario != "replay" || tr.Records != 60 || tr.Limit != 60 || tr.Speedup != 0.2 || tr.Digest == "" ||
		tr.Input.Max == 0 || tr.Output.Max == 0 || tr.PrefixReuse <= 0 || tr.ServerPrefixHitShare == nil {
		t.Errorf("result trace = %+v", tr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Trace: replay</h2>", `data-chart="ts-arrivals"`, "prefix reuse: trace "} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}

	plan, stderr, code := runBinary(t, nil, append([]string{"check"}, args...)...)
	if code != exitOK {
		t.Fatalf("check exited %d:\n%s\n%s", code, plan, stderr)
	}
	for _, want := range []string{"arrivals at the records' times", "60 records over", "replayed in 6.88 s", "input tokens",
		"prefix reuse: trace " + reuse[1] + "% (an infinite cache)", "expected 60 iterations, one per record"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
}
