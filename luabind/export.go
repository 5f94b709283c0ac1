package luabind

import (
	"github.com/llmload/llmload/engine/export"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var (
	exportKeys       = []string{"prometheus_rw", "otlp", "listen", "native", "every", "tags", "run_id", "headers"}
	exportTargetKeys = []string{"url", "native"}
)

// export reads options.export: where the run streams its live metrics.
//
//	export = { prometheus_rw = URL | { url = URL, native = true }, otlp = ..., listen = "ADDR",
//	           native = false, every = "5s", tags = { "prompt" }, run_id = "...", headers = { ... } }
func (d *decoder) export(path string, v lua.LValue) plan.Export {
	f := d.Record(path, v, exportKeys)
	var e plan.Export
	if f == nil {
		return e
	}
	native := false
	if n := f["native"]; n != nil {
		native = d.Boolean(luaval.Child(path, "native"), n)
	}
	for _, k := range []struct{ key, kind string }{{"prometheus_rw", plan.ExportPrometheusRW}, {"otlp", plan.ExportOTLP}} {
		if t := f[k.key]; t != nil {
			e.Targets = append(e.Targets, d.exportTarget(luaval.Child(path, k.key), k.kind, t, native))
		}
	}
	if l := f["listen"]; l != nil {
		e.Listen, e.ListenNative = d.Str(luaval.Child(path, "listen"), l), native
		if err := export.CheckListen(e.Listen); err != nil {
			d.Errorf(luaval.Child(path, "listen"), "%q: %v", e.Listen, err)
		}
	}
	if ev := f["every"]; ev != nil {
		e.Every = d.PositiveDuration(luaval.Child(path, "every"), ev)
	}
	if t := f["tags"]; t != nil {
		for i, item := range d.List(luaval.Child(path, "tags"), t) {
			e.Tags = append(e.Tags, d.Str(luaval.KeyPath(luaval.Child(path, "tags"), lua.LNumber(i+1)), item))
		}
		if err := export.CheckTags(e.Tags); err != nil {
			d.Errorf(luaval.Child(path, "tags"), "%v", err)
		}
	}
	if id := f["run_id"]; id != nil {
		e.RunID = d.Str(luaval.Child(path, "run_id"), id)
	}
	if h := f["headers"]; h != nil {
		e.Headers = d.StringMap(luaval.Child(path, "headers"), h)
	}
	return e
}

// exportTarget reads one pushed export: a URL, or { url =, native = }.
func (d *decoder) exportTarget(path, kind string, v lua.LValue, native bool) plan.ExportTarget {
	t := plan.ExportTarget{Kind: kind, Native: native}
	if s, ok := v.(lua.LString); ok {
		t.URL = string(s)
	} else if f := d.Record(path, v, exportTargetKeys); f != nil {
		if u := f["url"]; u != nil {
			t.URL = d.Str(luaval.Child(path, "url"), u)
		} else {
			d.Errorf(path, "no url")
		}
		if n := f["native"]; n != nil {
			t.Native = d.Boolean(luaval.Child(path, "native"), n)
		}
	}
	if t.URL != "" {
		if err := export.CheckURL(t.URL); err != nil {
			d.Errorf(path, "%s: %v", redact.URL(t.URL), err)
		}
	}
	return t
}
