package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmload/llmload/engine/result"
)

func TestExportFlagErrors(t *testing.T) {
	ok := writeScript(t, okScript)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	runExitCases(t, []exitCase{
		{"unknown kind", []string{"run", "--export", "influx=http://h", ok}, exitUsage, `unknown kind "influx" (want prometheus-rw or otlp)`},
		{"no kind", []string{"run", "--export", "http://h", ok}, exitUsage, "want KIND=URL"},
		{"bad url", []string{"run", "--export", "otlp=ftp://u:pw@h", ok}, exitUsage, "--export otlp=ftp://h: want an http:// or https:// URL"},
		{"twice", []string{"run", "--export", "otlp=http://h", "--export", "otlp=http://g", ok}, exitUsage, "given twice"},
		{"bad listen", []string{"run", "--listen", "9464", ok}, exitUsage, "--listen 9464: want host:port"},
		{"listen in use", []string{"run", "--listen", busy.Addr().String(), ok}, exitError, "--listen"},
	})
}

func TestExportFlagsRun(t *testing.T) {
	var rw, otlp atomic.Int64
	rwSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/write" && r.Header.Get("Content-Encoding") == "snappy" {
			rw.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rwSrv.Close()
	otlpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/metrics" {
			otlp.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer otlpSrv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	// The flags override the script's options.export.
	script := writeScript(t, strings.Replace(okScript, "options = {", `options = { export = { otlp = "http://127.0.0.1:1" },`, 1))
	stdout, stderr, code := runInProcess(t, "run", "--out", out, "--export", "prometheus-rw="+rwSrv.URL,
		"--export", "otlp="+otlpSrv.URL+",native", script)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if rw.Load() == 0 || otlp.Load() == 0 {
		t.Errorf("pushes: remote write %d, OTLP %d; want the final flush at least", rw.Load(), otlp.Load())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := result.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exports) != 2 || res.Exports[0].Failures+res.Exports[1].Failures != 0 || res.Run.RunID == "" {
		t.Errorf("exports = %+v, run id %q", res.Exports, res.Run.RunID)
	}
	if !strings.Contains(stdout, "exported: otlp "+otlpSrv.URL+": 1 push; prometheus-rw "+rwSrv.URL+": 1 push") {
		t.Errorf("summary lacks the exports line:\n%s", stdout)
	}
}
