package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/sim"
)

func TestParseSets(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{in: nil, want: map[string]string{}},
		{in: []string{"a=1", "b=x=y", " c =", "a=2"}, want: map[string]string{"a": "2", "b": "x=y", "c": ""}},
		{in: []string{"novalue"}, wantErr: true},
		{in: []string{"=v"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseSets(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseSets(%q) err = %v", tt.in, err)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) && !tt.wantErr {
			t.Errorf("parseSets(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestResolveTargetPrecedence(t *testing.T) {
	env := map[string]string{"LLMLOAD_BASE_URL": "http://env/v1", "LLMLOAD_MODEL": "env-model"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	script := resolveTarget(scriptTarget(), &runFlags{}, func(string) (string, bool) { return "", false })
	if got, want := script.BaseURL, "http://script/v1"; got != want {
		t.Errorf("script only: base = %q, want %q", got, want)
	}
	fromEnv := resolveTarget(scriptTarget(), &runFlags{}, lookup)
	if fromEnv.BaseURL != "http://env/v1" || fromEnv.Model != "env-model" || fromEnv.APIKey != "script-key" {
		t.Errorf("env over script: %+v", fromEnv)
	}
	flags := resolveTarget(scriptTarget(), &runFlags{target: "http://flag/v1", apiKey: "flag-key"}, lookup)
	if flags.BaseURL != "http://flag/v1" || flags.APIKey != "flag-key" || flags.Model != "env-model" {
		t.Errorf("flags over env: %+v", flags)
	}
}

// writeScript writes a scenario into a temporary directory.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.lua")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const okScript = `
local llm = require("llmload")
options = { stages = { { name = "c1", target = 1, duration = "200ms" } } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
end
`

// runInProcess runs the command in-process with a clean environment.
func runInProcess(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LLMLOAD_") || strings.Contains(strings.ToLower(k), "proxy") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

func TestBadInputExitCodes(t *testing.T) {
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"invalid api key","type":"auth"}}`)
	}))
	defer unauthorized.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	ok := writeScript(t, okScript)
	tests := []exitCase{
		{"no command", nil, exitUsage, "Usage"},
		{"unknown command", []string{"fly"}, exitUsage, `unknown command "fly"`},
		{"unknown flag", []string{"run", "--nope", ok}, exitUsage, "unknown flag"},
		{"no scenario", []string{"run"}, exitUsage, "expected one SCENARIO.lua"},
		{"bad --set", []string{"run", "--set", "x", ok}, exitUsage, "want key=value"},
		{"missing file", []string{"run", "/nonexistent/x.lua"}, exitError, "x.lua"},
		{"syntax error", []string{"run", writeScript(t, "options = {\nfunction")}, exitError, "s.lua:"},
		{"init runtime error", []string{"run", writeScript(t, "local x = nil\nx.y = 1")}, exitError, "s.lua:2"},
		{"misspelt key", []string{"run", writeScript(t, strings.Replace(okScript, "duration", "durtion", 1))}, exitError, "duration"},
		{"bad duration", []string{"run", writeScript(t, strings.Replace(okScript, `"200ms"`, `"5 minutes"`, 1))}, exitError, "5 minutes"},
		{"zero vus", []string{"run", writeScript(t, strings.Replace(okScript, "target = 1", "target = 0", 1))}, exitError, "target"},
		{"unknown executor", []string{"run", writeScript(t, `options = { scenarios = { a = { executor = "warp", exec = "f", vus = 1, duration = "1s" } } }
function f() end`)}, exitError, "warp"},
		{"401", []string{"run", "--target", unauthorized.URL + "/v1", "--model", "m", ok}, exitError, "API key"},
		{"404 without /v1", []string{"run", "--target", notFound.URL, "--model", "m", ok}, exitError, notFound.URL + "/v1"},
		{"refused", []string{"run", "--target", closedURL + "/v1", "--model", "m", ok}, exitError, strings.TrimPrefix(closedURL, "http://")},
		{"bad metrics_url", []string{"run", writeScript(t, strings.Replace(okScript, "options = {", `options = { target = { metrics_url = "notaurl" },`, 1))}, exitError, "metrics_url"},
		{"setup error", []string{"run", writeScript(t, okScript+"\nfunction setup() error(\"setup broke\") end\n")}, exitError, "setup broke"},
		{"out is a directory", []string{"run", "--out", os.TempDir(), ok}, exitError, "is a directory"},
		{"same file twice", []string{"run", "--out", "/tmp/x.json", "--csv", "/tmp/x.json", ok}, exitUsage, "two output flags"},
		{"out dir missing", []string{"run", "--out", "/nonexistent/dir/r.json", ok}, exitError, "/nonexistent/dir"},
		{"help", []string{"run", "--help"}, exitOK, ""},
		{"version", []string{"version"}, exitOK, ""},
		{"help names scenarios", []string{"help"}, exitOK, "llmload scenarios [DIR]"},
		{"scenarios help", []string{"scenarios", "--help"}, exitOK, "Usage: llmload scenarios [DIR]"},
		{"scenarios unknown flag", []string{"scenarios", "--nope"}, exitUsage, "unknown flag"},
		{"scenarios missing dir", []string{"scenarios", "/nonexistent/dir"}, exitError, "/nonexistent/dir: no such file or directory"},
		{"mock bad flag", []string{"mock", "--max-batch", "x"}, exitUsage, "max-batch"},
		{"mock fixed ttft alone", []string{"mock", "--fixed-ttft", "200ms"}, exitUsage, "fixed-delay mode needs both a TTFT and an ITL"},
		{"mock negative context", []string{"mock", "--max-context", "-5"}, exitUsage, "max context -5 is negative"},
		{"mock negative fixed itl", []string{"mock", "--fixed-ttft", "1s", "--fixed-itl", "-1ms"}, exitUsage, "negative"},
		{"mock truth log dir missing", []string{"mock", "--addr", "127.0.0.1:0", "--truth-log", "/nonexistent/dir/t.jsonl"}, exitError, "/nonexistent/dir"},
		{"mock cpu profile dir missing", []string{"mock", "--addr", "127.0.0.1:0", "--cpu-profile", "/nonexistent/dir/p"}, exitError, "--cpu-profile"},
		{"run cpu profile dir missing", []string{"run", "--cpu-profile", "/nonexistent/dir/p", ok}, exitError, "--cpu-profile"},
		{"run heap profile dir missing", []string{"run", "--heap-profile", "/nonexistent/dir/p", ok}, exitError, "--heap-profile"},
	}
	runExitCases(t, tests)
}

// exitCase is a command line with the exit code and the output it must give.
type exitCase struct {
	name string
	args []string
	code int
	want string
}

// runExitCases runs each case in-process and checks its exit code and output.
func runExitCases(t *testing.T, tests []exitCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runInProcess(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("output lacks %q:\nstdout:\n%s\nstderr:\n%s", tt.want, stdout, stderr)
			}
		})
	}
}

func scriptTarget() plan.Target {
	return plan.Target{BaseURL: "http://script/v1", APIKey: "script-key", Model: "script-model"}
}

func TestIterationErrorsAreListedAndRunGoesOn(t *testing.T) {
	path := writeScript(t, `
local llm = require("llmload")
options = { stages = { { name = "c2", target = 2, duration = "300ms" } } }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 }
  if vu.iteration % 2 == 1 then
    error("boom")
  end
end
`)
	stdout, stderr, code := runInProcess(t, "run", "--quiet", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "script errors") || !strings.Contains(stdout, "s.lua:7: boom") {
		t.Errorf("summary does not list the script error with file:line:\n%s", stdout)
	}
	if stderr != "" {
		t.Errorf("--quiet printed to stderr:\n%s", stderr)
	}
}

func TestThresholdConfigErrorsBeforeLoad(t *testing.T) {
	tests := []struct {
		thresholds string
		want       string
	}{
		{`["ttfx.p99"] = "< 1s"`, `unknown metric "ttfx"`},
		{`["ttft.p99"] = "less than 1s"`, "want [aggregation] operator value"},
		{`["ttft{stage:c9}.p99"] = "< 1s"`, `no stage "c9"`},
	}
	for _, tt := range tests {
		path := writeScript(t, strings.Replace(okScript, "options = {", "options = { thresholds = { "+tt.thresholds+" },", 1))
		stdout, stderr, code := runInProcess(t, "run", "--target", "http://127.0.0.1:1/v1", path)
		if code != exitError || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "s.lua") {
			t.Errorf("%s: exit %d, stderr:\n%s\nstdout:\n%s", tt.thresholds, code, stderr, stdout)
		}
		if strings.Contains(stderr, "connection refused") {
			t.Errorf("%s: preflight ran before the config error", tt.thresholds)
		}
	}
}

func TestAbortOnFailStopsTheRunWith99(t *testing.T) {
	path := writeScript(t, `
local llm = require("llmload")
options = {
  stages = { { name = "c1", target = 1, duration = "20s" } },
  thresholds = { ["ttft.p99"] = { "< 1us", abort_on_fail = true } },
}
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 }
end
`)
	start := time.Now()
	stdout, stderr, code := runInProcess(t, "run", "--quiet", path)
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitThreshold, stdout, stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("run took %v: abort_on_fail did not stop it", d)
	}
	if !strings.Contains(stdout, "aborted the run") || !strings.Contains(stderr, "ttft.p99 < 1us") {
		t.Errorf("summary or error does not name the aborting threshold:\n%s\n%s", stdout, stderr)
	}
}

// failAfter serves the simulator for the first n chat requests (preflight
// is one) and a 500 with an error body for every later one; it counts the
// chat requests.
func failAfter(t *testing.T, n int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	simulator := sim.New(sim.Config{DecodeBase: -1, PrefillBase: -1})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/completions") && count.Add(1) > n {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"broken on purpose"}}`)
			return
		}
		simulator.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

// TestNothingMeasuredExitsOne: a run that sent nothing, raised a script
// error in every iteration, or had no request succeed exits 1 with the
// reason in one line, after writing its summary and result file.
func TestNothingMeasuredExitsOne(t *testing.T) {
	const head = "local llm = require(\"llmload\")\noptions = { %s stages = { { name = \"c1\", target = 2, duration = \"300ms\" } } }\n"
	script := func(options, body string) string { return writeScript(t, fmt.Sprintf(head, options)+body) }
	chat := `function iteration(vu) llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 3 } end`
	tests := []struct {
		name      string
		script    string
		okChats   int64 // served before the server fails; -1: never fails
		code      int
		want      string
		threshold bool
	}{
		{"typo in every iteration", script("", "function iteration(vu)\n  llm.chat { messages = { { role = \"user\", content = \"hi\" } }, max_tokn = 3 }\nend"), -1,
			exitError, "nothing measured: all %s iterations failed with a script error and no request was sent; first: %s:4: llm.chat.max_tokn: unknown key (did you mean max_tokens?)", false},
		{"never calls llm.chat", script("", `function iteration(vu) llm.sleep("20ms") end`), -1,
			exitError, "nothing measured: no request was sent: %s iterations ran and none called llm.chat or llm.complete", false},
		{"every request failed", script("", chat), 1,
			exitError, "nothing measured: no request succeeded: all %s requests failed (http_5xx:500×", false},
		{"only warmup succeeded", script("warmup = { requests = 3 },", chat), 4,
			exitError, "nothing measured: no request succeeded", false},
		{"nothing measured wins over a failed threshold", script(`thresholds = { ["errors.rate"] = "< 1%" },`, chat), 1,
			exitError, "nothing measured: no request succeeded", true},
		{"measured", script("", chat), -1, exitOK, "", false},
		{"robustness only, careful server", script(`dirty = { ratio = 1, kinds = { empty = 1 } },`, chat), -1, exitOK, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := failAfter(t, cmpOr(tt.okChats, 1<<40))
			out := filepath.Join(t.TempDir(), "r.json")
			stdout, stderr, code := runInProcess(t, "run", "--quiet", "--out", out, "--target", srv.URL+"/v1", tt.script)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			res, err := readResult(out)
			if err != nil {
				t.Fatalf("no result file written: %v", err)
			}
			if tt.want == "" {
				if res.Run.Verdict != "" || stderr != "" {
					t.Errorf("verdict %q, stderr %q; want neither", res.Run.Verdict, stderr)
				}
				return
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if !matchesCount(last, "llmload: "+tt.want, tt.script) {
				t.Errorf("last stderr line %q, want %q", last, tt.want)
			}
			if got := "llmload: " + res.Run.Verdict; got != last {
				t.Errorf("result verdict %q, want the line %q", res.Run.Verdict, last)
			}
			if !strings.Contains(stdout, "nothing measured") {
				t.Errorf("summary does not say nothing was measured:\n%s", stdout)
			}
			if tt.threshold && !strings.Contains(stdout, "✗ errors.rate") {
				t.Errorf("summary lacks the failed threshold:\n%s", stdout)
			}
		})
	}
}

// matchesCount reports whether line starts with want, where want's %s are
// a count (digits and commas) and then the script path.
func matchesCount(line, want, path string) bool {
	want = strings.Replace(want, "%s", `[0-9,]+`, 1)
	want = strings.Replace(want, "%s", path, 1)
	quoted := regexp.QuoteMeta(want)
	quoted = strings.ReplaceAll(quoted, regexp.QuoteMeta(`[0-9,]+`), `[0-9,]+`)
	return regexp.MustCompile("^" + quoted).MatchString(line)
}

func cmpOr(v, def int64) int64 {
	if v >= 0 {
		return v
	}
	return def
}

// TestNoEffectFlagsAreUsageErrors: flags that would do nothing exit 2
// before any request reaches the server.
func TestNoEffectFlagsAreUsageErrors(t *testing.T) {
	srv, count := failAfter(t, -1)
	params := writeScript(t, `local llm = require("llmload")
options = { vus = 1, duration = llm.param("duration", "200ms") }
function iteration(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = llm.param("max_tokens", 3) }
end`)
	res := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(res, []byte(`{"schema_version":1,"run":{},"stages":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	target := []string{"--target", srv.URL + "/v1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"misspelt --set", append([]string{"run", "--set", "duraton=2s", params}, target...),
			"--set duraton: no llm.param in " + params + " reads this key (did you mean duration?); the keys it reads: duration, max_tokens"},
		{"unread --set", append([]string{"run", "--set", "vus=4", params}, target...), "--set vus: no llm.param in "},
		{"check: misspelt --set", []string{"check", "--set", "max_token=9", params}, "(did you mean max_tokens?)"},
		{"--max-regression without --baseline", append([]string{"run", "--max-regression", "20%", params}, target...),
			"run: --max-regression has no effect without --baseline BASE.json"},
		{"--metrics and --format without --baseline", append([]string{"run", "--metrics", "ttft.p99", "--format", "md", params}, target...),
			"run: --format, --metrics have no effect without --baseline BASE.json"},
		{"report --quiet alone", []string{"report", "--quiet", res}, "report: --quiet with neither --html, --csv-stages nor --truth would do nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runInProcess(t, tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
		})
	}
	if n := count.Load(); n != 0 {
		t.Errorf("%d requests reached the server, want 0", n)
	}
}

// TestGateFlagsNeedOnlyABaseline: the gate flags are refused only without --baseline.
func TestGateFlagsNeedOnlyABaseline(t *testing.T) {
	fs := pflag.NewFlagSet("gate", pflag.ContinueOnError)
	var g gateFlags
	g.register(fs)
	if err := fs.Parse([]string{"--max-regression", "10%"}); err != nil {
		t.Fatal(err)
	}
	if err := needBaseline(fs, "base.json"); err != nil {
		t.Errorf("with --baseline: %v", err)
	}
	if err := needBaseline(fs, ""); err == nil {
		t.Error("without --baseline: no error")
	}
}
