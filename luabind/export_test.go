package luabind

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

func TestOptionsExport(t *testing.T) {
	path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", export = {
		prometheus_rw = "http://127.0.0.1:9090/api/v1/write", otlp = { url = "http://127.0.0.1:4318", native = true },
		listen = "127.0.0.1:9464", every = "2s", tags = { "prompt", "turn" }, run_id = "nightly",
		headers = { Authorization = "Bearer abc" } } }`))
	e := mustCompile(t, path, Options{}).Plan().Export
	want := plan.Export{
		Targets: []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: "http://127.0.0.1:9090/api/v1/write"},
			{Kind: plan.ExportOTLP, URL: "http://127.0.0.1:4318", Native: true}},
		Listen: "127.0.0.1:9464", Every: 2 * time.Second, Tags: []string{"prompt", "turn"}, RunID: "nightly",
		Headers: map[string]string{"Authorization": "Bearer abc"},
	}
	if got, want := e, want; !exportEqual(got, want) {
		t.Errorf("export = %+v, want %+v", got, want)
	}
}

func exportEqual(a, b plan.Export) bool {
	if len(a.Targets) != len(b.Targets) || a.Listen != b.Listen || a.Every != b.Every || a.RunID != b.RunID ||
		strings.Join(a.Tags, ",") != strings.Join(b.Tags, ",") || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Targets {
		if a.Targets[i] != b.Targets[i] {
			return false
		}
	}
	for k, v := range a.Headers {
		if b.Headers[k] != v {
			return false
		}
	}
	return true
}

func TestOptionsExportErrors(t *testing.T) {
	for _, tt := range []struct{ name, export, want string }{
		{"typo", `{ prometheus_w = "http://h" }`, "options.export.prometheus_w: unknown key (did you mean prometheus_rw?)"},
		{"target typo", `{ otlp = { ulr = "http://h" } }`, "options.export.otlp.ulr: unknown key (did you mean url?)"},
		{"bad scheme", `{ prometheus_rw = "ftp://u:secret@h/x" }`, "options.export.prometheus_rw: ftp://h/x: want an http:// or https:// URL"},
		{"no host", `{ otlp = "http:///v1/metrics" }`, "options.export.otlp: http:///v1/metrics: no host in the URL"},
		{"bad listen", `{ listen = "9464" }`, `options.export.listen: "9464": want host:port or :port`},
		{"bad port", `{ listen = ":http" }`, `options.export.listen: ":http": port "http" is not a number`},
		{"reserved tag", `{ tags = { "stage" } }`, `options.export.tags: tag "stage" is a label llmload sets itself`},
		{"tags not a list", `{ tags = "prompt" }`, "options.export.tags: expected a list (table), got string"},
		{"every", `{ every = "0s" }`, "options.export.every: must be > 0, got 0s"},
		{"native", `{ native = "yes" }`, "options.export.native: expected boolean, got string"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeScript(t, "x.lua", script(`{ vus = 1, duration = "1s", export = `+tt.export+` }`))
			_, err := Compile(path, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the URL's password shows: %v", err)
			}
		})
	}
}
