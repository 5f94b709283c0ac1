package threshold

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// splitExpr splits "metric{tag:value,...}.agg" into its parts. Metric names
// may contain dots, so the name is the known metric that the expression
// starts with, and whatever follows must be a filter and an aggregation.
func splitExpr(expr string, known map[string]string) (string, metrics.Filter, string, error) {
	expr = strings.TrimSpace(expr)
	rest := ""
	name := expr
	var filter metrics.Filter
	if i := strings.IndexByte(expr, '{'); i >= 0 {
		j := strings.IndexByte(expr, '}')
		if j < i {
			return "", nil, "", fmt.Errorf("unclosed tag filter in %q", expr)
		}
		f, err := parseFilter(expr[i+1 : j])
		if err != nil {
			return "", nil, "", err
		}
		name, filter, rest = expr[:i], f, expr[j+1:]
		if _, ok := known[name]; !ok {
			return "", nil, "", unknownMetric(name, known)
		}
	} else {
		name, rest = splitName(expr, known)
		if name == "" {
			return "", nil, "", unknownMetric(strings.SplitN(expr, ".", 2)[0], known)
		}
	}
	if rest == "" {
		return name, filter, "", nil
	}
	if rest[0] != '.' || len(rest) == 1 {
		return "", nil, "", fmt.Errorf("%q: expected .aggregation after the metric, e.g. %s.p99", expr, name)
	}
	return name, filter, rest[1:], nil
}

// splitName finds the longest known metric name that expr starts with,
// followed by the end or a dot.
func splitName(expr string, known map[string]string) (string, string) {
	best := ""
	for name := range known {
		if strings.HasPrefix(expr, name) && (len(expr) == len(name) || expr[len(name)] == '.') && len(name) > len(best) {
			best = name
		}
	}
	return best, expr[len(best):]
}

func unknownMetric(name string, known map[string]string) error {
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(names, ", "))
}

// parseFilter reads "stage:c8, prompt:short".
func parseFilter(s string) (metrics.Filter, error) {
	f := metrics.Filter{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, ":")
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("tag filter %q: want {tag:value, ...}", "{"+s+"}")
		}
		if _, dup := f[k]; dup {
			return nil, fmt.Errorf("tag filter %q names %s twice", "{"+s+"}", k)
		}
		f[k] = v
	}
	return f, nil
}

// checkFilter rejects scenario and stage names the plan does not have, so a
// typo cannot turn a gate into one that never sees data.
func checkFilter(f metrics.Filter, stages map[string][]string) error {
	if stages == nil {
		return nil
	}
	sc, hasSc := f["scenario"]
	if hasSc {
		if _, ok := stages[sc]; !ok {
			return fmt.Errorf("tag filter: no scenario %q (scenarios: %s)", sc, strings.Join(sortedKeys(stages), ", "))
		}
	}
	st, hasSt := f["stage"]
	if !hasSt {
		return nil
	}
	var all []string
	for name, list := range stages {
		if !hasSc || name == sc {
			all = append(all, list...)
		}
	}
	if !slices.Contains(all, st) {
		slices.Sort(all)
		return fmt.Errorf("tag filter: no stage %q (stages: %s)", st, strings.Join(slices.Compact(all), ", "))
	}
	return nil
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var condRE = regexp.MustCompile(`^\s*([a-z]+(?:\(\s*[0-9.]+\s*\)|[0-9.]+)?)?\s*(<=|>=|==|!=|<|>)\s*(\S.*?)\s*$`)

// aggsByKind lists the aggregations each kind of metric supports.
var aggsByKind = map[string][]string{
	engine.MetricTrend:   {"avg", "min", "max", "med", "pNN", "count"},
	engine.MetricCounter: {"count", "rate"},
	engine.MetricRate:    {"rate", "count"},
}

// parseCondition reads "[agg] op value"; keyAgg is an aggregation written
// in the expression ("ttft.p99"), which a condition may not contradict.
func parseCondition(text, keyAgg, kind string) (Condition, error) {
	m := condRE.FindStringSubmatch(text)
	if m == nil {
		return Condition{}, fmt.Errorf("want [aggregation] operator value, e.g. %q or %q", "< 1s", "rate > 0.99")
	}
	aggText := m[1]
	switch {
	case aggText != "" && keyAgg != "" && aggText != keyAgg:
		return Condition{}, fmt.Errorf("aggregation %s here and %s in the metric name", aggText, keyAgg)
	case aggText == "":
		aggText = keyAgg
	}
	c := Condition{Text: strings.TrimSpace(text), Op: m[2]}
	var err error
	if c.Agg, c.P, err = parseAgg(aggText, kind); err != nil {
		return Condition{}, err
	}
	c.Value, err = parseValue(m[3], kind, c.Agg)
	return c, err
}

// parseAgg reads avg, min, max, med, count, rate, p99, p99.9 or p(99).
func parseAgg(s, kind string) (string, float64, error) {
	valid := strings.Join(aggsByKind[kind], ", ")
	if s == "" {
		switch kind {
		case engine.MetricCounter:
			return metrics.AggCount, 0, nil
		case engine.MetricRate:
			return metrics.AggRate, 0, nil
		}
		return "", 0, fmt.Errorf("a %s needs an aggregation (%s), e.g. ttft.p99 or \"p99 < 1s\"", kind, valid)
	}
	agg, p := s, 0.0
	if s[0] == 'p' && len(s) > 1 {
		num := strings.Trim(s[1:], "() ")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v <= 0 || v >= 100 {
			return "", 0, fmt.Errorf("percentile %q: want p followed by a number between 0 and 100, e.g. p99 or p99.9", s)
		}
		agg, p = metrics.AggP, v
	}
	allowed := map[string][]string{
		engine.MetricTrend:   {metrics.AggAvg, metrics.AggMin, metrics.AggMax, metrics.AggMed, metrics.AggP, metrics.AggCount},
		engine.MetricCounter: {metrics.AggCount, metrics.AggRate},
		engine.MetricRate:    {metrics.AggRate, metrics.AggCount},
	}[kind]
	if !slices.Contains(allowed, agg) {
		return "", 0, fmt.Errorf("aggregation %q does not apply to a %s (valid: %s)", s, kind, valid)
	}
	return agg, p, nil
}

// parseValue reads the bound: durations for trend values (plain numbers are
// milliseconds, as in k6), percentages for rates, plain numbers otherwise.
func parseValue(s, kind, agg string) (float64, error) {
	isTime := kind == engine.MetricTrend && agg != metrics.AggCount
	if strings.HasSuffix(s, "%") {
		if kind != engine.MetricRate || agg != metrics.AggRate {
			return 0, fmt.Errorf("%q: a percentage only applies to a rate", s)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a percentage", s)
		}
		return v / 100, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	if !isTime {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (use e.g. 800ms, 1.5s)", s)
	}
	return float64(d) / float64(time.Millisecond), nil
}
