package luabind

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/threshold"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// Capacity search defaults: a search that doubles from one request per
// second (or one VU) to 5% precision, each probe warmed for 10 s and
// measured for 30 s, extended up to 5 min in all when 30 s cannot decide.
const (
	DefaultCapacityGrowth     = 2.0
	DefaultCapacityPrecision  = 0.05
	DefaultCapacityWarmup     = 10 * time.Second
	DefaultCapacityWindow     = 30 * time.Second
	DefaultCapacityMinSamples = 30
	DefaultCapacityMaxWindow  = 5 * time.Minute
	// capacitySteps bounds the default max: start × growth^10.
	capacitySteps = 10
)

var capacityLoads = []string{plan.CapacityRate, plan.CapacityVUs}

// capacity reads a capacity scenario: what load it searches, where it
// starts and stops, how each probe is measured and what it must meet.
func (d *decoder) capacity(path string, f map[string]lua.LValue, sc *plan.Scenario) {
	c := &plan.CapacitySearch{Load: plan.CapacityRate, Start: 1, Growth: DefaultCapacityGrowth,
		Precision: DefaultCapacityPrecision, Warmup: DefaultCapacityWarmup, Window: DefaultCapacityWindow,
		MinSamples: DefaultCapacityMinSamples, IdleTimeout: plan.DefaultProbeIdleTimeout}
	sc.Capacity = c
	if v := f["load"]; v != nil {
		c.Load = d.Str(luaval.Child(path, "load"), v)
		if _, isStr := v.(lua.LString); isStr && !luaval.Contains(capacityLoads, c.Load) {
			d.Errorf(luaval.Child(path, "load"), "unknown load %q (valid: %s: an arrival rate, open model; %s: VUs, closed model)",
				c.Load, plan.CapacityRate, plan.CapacityVUs)
		}
	}
	vus := c.Load == plan.CapacityVUs
	if v := f["start"]; v != nil {
		c.Start = d.capacityLoad(luaval.Child(path, "start"), v, vus)
	}
	if v := f["growth"]; v != nil {
		if c.Growth = d.Number(luaval.Child(path, "growth"), v, 0); c.Growth <= 1 {
			d.Errorf(luaval.Child(path, "growth"), "must be > 1 (the factor between bracket probes), got %g", c.Growth)
		}
	}
	if v := f["max"]; v != nil {
		c.Max = d.capacityLoad(luaval.Child(path, "max"), v, vus)
	} else if c.Growth > 1 {
		c.Max = c.Start * math.Pow(c.Growth, capacitySteps)
	}
	if vus {
		c.Max = math.Floor(min(c.Max, math.MaxInt32))
	}
	if c.Max < c.Start && c.Start > 0 && c.Max > 0 {
		d.Errorf(luaval.Child(path, "max"), "%g is below start %g", c.Max, c.Start)
	}
	if v := f["precision"]; v != nil {
		c.Precision = d.share(luaval.Child(path, "precision"), v)
		if c.Precision <= 0 || c.Precision >= 1 {
			d.Errorf(luaval.Child(path, "precision"), "must be above 0%% and below 100%% (e.g. \"5%%\"), got %g", c.Precision)
		}
	}
	if v := f["warmup"]; v != nil {
		c.Warmup, _ = d.Duration(luaval.Child(path, "warmup"), v)
	}
	if v := f["window"]; v != nil {
		c.Window = d.PositiveDuration(luaval.Child(path, "window"), v)
	}
	// Undecided probes are extended until their samples decide: a p99
	// needs about 300 requests before its confidence interval is bounded,
	// which at a low rate takes minutes, not four windows.
	c.MaxWindow = max(4*c.Window, DefaultCapacityMaxWindow)
	if v := f["max_window"]; v != nil {
		c.MaxWindow = d.PositiveDuration(luaval.Child(path, "max_window"), v)
		if c.MaxWindow > 0 && c.MaxWindow < c.Window {
			d.Errorf(luaval.Child(path, "max_window"), "%s is shorter than window %s", plan.FormatDuration(c.MaxWindow), plan.FormatDuration(c.Window))
		}
	}
	if v := f["idle_timeout"]; v != nil {
		c.IdleTimeout = d.PositiveDuration(luaval.Child(path, "idle_timeout"), v)
	}
	if v := f["min_samples"]; v != nil {
		c.MinSamples = d.Count(luaval.Child(path, "min_samples"), v, 1)
	}
	if v := f["good_share"]; v != nil {
		c.GoodShare = d.share(luaval.Child(path, "good_share"), v)
		if c.GoodShare <= 0 || c.GoodShare > 1 {
			d.Errorf(luaval.Child(path, "good_share"), "must be above 0 and at most 1 (e.g. 0.95 or \"95%%\"), got %g", c.GoodShare)
		}
	}
	if v := f["conditions"]; v != nil {
		c.Conditions = d.capacityConditions(luaval.Child(path, "conditions"), v)
	}
	if f["good_share"] == nil && f["conditions"] == nil {
		d.Errorf(path, "a capacity search needs good_share (with options.slo) or conditions (e.g. { \"ttft.p99 < 1s\" }) to judge its probes")
	}
	if vus {
		for _, k := range []string{"arrival", "burstiness", "pre_allocated_vus", "max_vus"} {
			if f[k] != nil {
				d.Errorf(luaval.Child(path, k), "only valid with load = %q (this search is of VUs)", plan.CapacityRate)
			}
		}
		return
	}
	sc.TimeUnit = plan.DefaultTimeUnit
	d.vuPool(path, f, sc, "arrival", max(int(math.Ceil(c.Start)), 1), 1000)
	if c.Max > MaxRatePerSecond {
		d.Errorf(luaval.Child(path, "max"), "a rate of %.4g iterations/s is beyond the %d/s one llmload process can start", c.Max, MaxRatePerSecond)
	}
	d.arrival(path, f, sc)
}

// capacityLoad reads a load: a positive rate, or a whole number of VUs.
func (d *decoder) capacityLoad(path string, v lua.LValue, vus bool) float64 {
	if vus {
		return float64(d.Count(path, v, 1))
	}
	return d.PositiveNumber(path, v)
}

// share reads a fraction written as a number (0.05) or a percentage
// ("5%").
func (d *decoder) share(path string, v lua.LValue) float64 {
	s, isStr := v.(lua.LString)
	if !isStr {
		return d.Number(path, v, 0)
	}
	text := strings.TrimSpace(string(s))
	pct, ok := strings.CutSuffix(text, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
	if !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.Errorf(path, "expected a fraction (0.05) or a percentage (\"5%%\"), got %q", text)
		return 0
	}
	return f / 100
}

// capacityConditions reads the conditions every probe must meet, each a
// threshold condition on one metric: "ttft.p99 < 1s".
func (d *decoder) capacityConditions(path string, v lua.LValue) []string {
	var out []string
	for i, item := range d.List(path, v) {
		p := luaval.Index(path, i+1)
		s, isStr := item.(lua.LString)
		if !isStr {
			d.Errorf(p, "expected a condition string such as \"ttft.p99 < 1s\", got %s", item.Type())
			continue
		}
		if _, err := threshold.ParseProbeCondition(string(s)); err != nil {
			d.Errorf(p, "%v", err)
			continue
		}
		out = append(out, string(s))
	}
	return out
}
