package main

import (
	"cmp"
	"strings"

	"github.com/llmload/llmload/engine/export"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/spf13/pflag"
)

// exportFlags are --export and --listen: they override options.export.
type exportFlags struct {
	exports []string
	listen  string
	targets []plan.ExportTarget
	native  bool   // --listen ADDR,native
	cmd     string // the subcommand its errors name; "" is run
}

// nativeSuffix asks an export for native histograms.
const nativeSuffix = ",native"

func (e *exportFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&e.exports, "export", nil, "stream the run's live metrics: prometheus-rw=URL (remote write, e.g.\n"+
		"http://127.0.0.1:9090/api/v1/write) or otlp=URL (OTLP/HTTP, e.g. http://127.0.0.1:4318/v1/metrics);\n"+
		"append ,native for native histograms; repeatable, and overrides options.export")
	fs.StringVar(&e.listen, "listen", "", "serve the run's live metrics at http://ADDR/metrics for a Prometheus to scrape,\n"+
		"e.g. 127.0.0.1:9464 (append ,native to offer native histograms)")
}

// parse checks the flags; a bad one is a usage error (exit 2) that never
// repeats a URL's credentials.
func (e *exportFlags) parse() error {
	cmd := cmp.Or(e.cmd, "run")
	for _, v := range e.exports {
		kind, url, ok := strings.Cut(v, "=")
		if !ok {
			return usagef("%s: --export %s: want KIND=URL (KIND: %s)", cmd, redact.URL(v), strings.Join(plan.ExportKinds(), ", "))
		}
		t := plan.ExportTarget{Kind: kind}
		t.URL, t.Native = strings.CutSuffix(url, nativeSuffix)
		switch {
		case kind != plan.ExportPrometheusRW && kind != plan.ExportOTLP:
			return usagef("%s: --export %s=...: unknown kind %q (want %s)", cmd, kind, kind, strings.Join(plan.ExportKinds(), " or "))
		case export.CheckURL(t.URL) != nil:
			return usagef("%s: --export %s=%s: %v", cmd, kind, redact.URL(t.URL), export.CheckURL(t.URL))
		}
		for _, o := range e.targets {
			if o.Kind == kind {
				return usagef("%s: --export %s given twice (one receiver per kind)", cmd, kind)
			}
		}
		e.targets = append(e.targets, t)
	}
	if e.listen != "" {
		e.listen, e.native = strings.CutSuffix(e.listen, nativeSuffix)
		if err := export.CheckListen(e.listen); err != nil {
			return usagef("%s: --listen %s: %v", cmd, e.listen, err)
		}
	}
	return nil
}

// apply puts the flags over the script's options.export.
func (e *exportFlags) apply(x *plan.Export) {
	for _, t := range e.targets {
		x.SetTarget(t)
	}
	if e.listen != "" {
		x.Listen, x.ListenNative = e.listen, e.native
	}
}
