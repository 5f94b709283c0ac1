package api

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	lua "github.com/yuin/gopher-lua"
)

// metricNamePattern keeps custom metric names usable in threshold
// expressions ("name{tag:value}.p99") and in every report format.
var metricNamePattern = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// customMetric is the value behind a metric object in Lua.
type customMetric struct {
	name, kind string
}

// declareMetric implements llm.metric.trend(name), llm.metric.counter(name)
// and llm.metric.rate(name) -> metric with :add(value [, tags]). Metrics
// are declared at the top level, so every VU and the plan agree on them;
// declaring one name twice with the same kind returns an equal object.
func (m *Module) declareMetric(kind string) lua.LGFunction {
	return func(L *lua.LState) int {
		name := L.CheckString(1)
		fn := fmt.Sprintf("llm.metric.%s(%q)", kind, name)
		if m.Phase != phaseInit {
			L.RaiseError("%s: declare metrics at the top level of the script, not inside a function", fn)
		}
		if err := m.checkMetric(name, kind); err != "" {
			L.RaiseError("%s: %s", fn, err)
		}
		m.metrics[name] = kind
		ud := L.NewUserData()
		ud.Value = &customMetric{name: name, kind: kind}
		L.SetMetatable(ud, m.metricMetatable(L))
		L.Push(ud)
		return 1
	}
}

// checkMetric returns why name cannot be declared as kind, or "".
func (m *Module) checkMetric(name, kind string) string {
	if !metricNamePattern.MatchString(name) {
		return "names are lower-case letters, digits and _, starting with a letter or _"
	}
	if _, builtin := metrics.Builtin()[name]; builtin {
		return "the name of a built-in metric; choose another"
	}
	if prev, ok := m.metrics[name]; ok && prev != kind {
		return "already declared as a " + prev
	}
	// VUs run the top level again; a metric the plan lacks (declared
	// under a condition that changed) would reach no threshold or report.
	if m.prog.Metrics != nil && m.prog.Metrics[name] != kind {
		return "not declared when the script was compiled (declare metrics unconditionally)"
	}
	return ""
}

// DeclaredMetrics lists the metrics declared at init, sorted by name.
func (m *Module) DeclaredMetrics() []plan.MetricDef {
	out := make([]plan.MetricDef, 0, len(m.metrics))
	for name, kind := range m.metrics {
		out = append(out, plan.MetricDef{Name: name, Kind: kind})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil
	}
	return out
}

// metricMetatable is made once per VU and shared by its metric objects.
func (m *Module) metricMetatable(L *lua.LState) *lua.LTable {
	if m.metricMeta == nil {
		methods := L.SetFuncs(L.CreateTable(0, 1), map[string]lua.LGFunction{"add": m.metricAdd})
		m.metricMeta = L.CreateTable(0, 2)
		m.metricMeta.RawSetString("__index", methods)
		m.metricMeta.RawSetString("__metatable", lua.LString("llmload.metric"))
	}
	return m.metricMeta
}

func checkCustomMetric(L *lua.LState) *customMetric {
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		if c, ok := ud.Value.(*customMetric); ok {
			return c
		}
	}
	L.ArgError(1, "metric expected (call methods with a colon: metric:add(value))")
	return nil
}

// metricAdd implements metric:add(value [, tags]). A trend or counter
// takes a number; a rate counts nil, false, 0 and NaN as 0 and any other
// value as 1 (0 is a failure as in k6, although Lua deems it true). Tags
// are merged over the scenario's. In setup/teardown the value is checked
// but not recorded, like llm.chat's samples there.
func (m *Module) metricAdd(L *lua.LState) int {
	c := checkCustomMetric(L)
	if m.Phase == phaseInit || m.Phase == PhaseIdle {
		L.RaiseError("%s:add can only be called inside an iteration, not at the top level", c.name)
	}
	value := metricValue(L, c)
	var tags map[string]string
	if t := L.Get(3); t != lua.LNil {
		d := &ArgDecoder{}
		tags = d.StringMap("tags", t)
		if len(d.Errs) > 0 {
			L.ArgError(3, strings.Join(d.Errs, "; "))
		}
	}
	if !m.recording() {
		return 0
	}
	m.cfg.Sink.Metric(engine.MetricSample{
		Name: c.name, Kind: c.kind, Value: value,
		Scenario: m.it.Scenario, Stage: m.it.Stage, Warmup: m.it.Warmup,
		Tags: mergeTags(m.prog.Tags[m.it.Scenario], tags),
	})
	return 0
}

func metricValue(L *lua.LState, c *customMetric) float64 {
	v := L.Get(2)
	n, isNum := v.(lua.LNumber)
	if c.kind == engine.MetricRate {
		if isNum {
			if n == 0 || math.IsNaN(float64(n)) {
				return 0
			}
			return 1
		}
		if lua.LVAsBool(v) {
			return 1
		}
		return 0
	}
	if !isNum {
		L.ArgError(2, fmt.Sprintf("%s %s takes a number, got %s", c.kind, c.name, v.Type()))
	}
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		L.ArgError(2, fmt.Sprintf("%s %s takes a finite number, got %v", c.kind, c.name, n))
	}
	return float64(n)
}
