// Package grafana holds llmload's Grafana dashboard (llmload.json) and the
// test that keeps it honest: a dashboard whose queries name a series
// nobody exports shows "No data" and nobody notices until a run they
// wanted to watch.
package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/export"
	"github.com/llmload/llmload/engine/servermetrics"
)

// The dashboard as Grafana's (classic) dashboard JSON model has it: only
// the fields the test reads.
type (
	dashboard struct {
		UID           string `json:"uid"`
		Title         string `json:"title"`
		SchemaVersion int    `json:"schemaVersion"`
		Templating    struct {
			List []variable `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	variable struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Query      json.RawMessage `json:"query"` // a string, or {"query": ...} for Prometheus
		Definition string          `json:"definition"`
		Datasource *datasource     `json:"datasource"`
	}
	panel struct {
		ID         int         `json:"id"`
		Type       string      `json:"type"`
		Title      string      `json:"title"`
		GridPos    *gridPos    `json:"gridPos"`
		Datasource *datasource `json:"datasource"`
		Targets    []target    `json:"targets"`
		Collapsed  bool        `json:"collapsed"`
		Panels     []panel     `json:"panels"` // a collapsed row's
	}
	gridPos    struct{ X, Y, W, H int }
	datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	target struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	}
)

// The datasource every panel and query variable uses: the dashboard's
// "datasource" variable, so that an import asks for a Prometheus instead
// of naming one of ours.
const (
	datasourceVar  = "datasource"
	datasourceType = "prometheus"
	datasourceUID  = "${datasource}"
)

// gridWidth is the width of Grafana's grid.
const gridWidth = 24

// requiredVariables are the template variables the llmload panels filter on.
var requiredVariables = []string{datasourceVar, "run_id", "scenario", "stage"}

func readDashboard(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("llmload.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDashboard(t *testing.T) {
	data := readDashboard(t)
	for _, err := range check(data) {
		t.Error(err)
	}
	// Every series llmload exports has a panel: a series added to the
	// exporter without one is a view nobody gets.
	used := map[string]bool{}
	for _, name := range usedNames(t, data) {
		used[histogramBase(name)] = true
	}
	for _, name := range exportedSeries() {
		if !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}

// TestDashboardCatchesMistakes doctors copies of the dashboard and checks
// that each mistake is reported: the checks above can fail.
func TestDashboardCatchesMistakes(t *testing.T) {
	data := string(readDashboard(t))
	for _, tc := range []struct {
		name, old, new string
		want           string // in one of the errors
	}{
		{"misspelt llmload series", `llmload_ttft_seconds_bucket`, `llmload_ttft_second_bucket`, `"llmload_ttft_second_bucket"`},
		{"suffix of a counter", `llmload_output_tokens_total{`, `llmload_output_tokens_total_bucket{`, `"llmload_output_tokens_total_bucket"`},
		{"misspelt server metric", `vllm:num_requests_waiting`, `vllm:num_request_waiting`, `"vllm:num_request_waiting"`},
		{"server histogram without _bucket", `sglang:time_to_first_token_seconds_bucket`, `sglang:time_to_first_token_seconds`, `"sglang:time_to_first_token_seconds"`},
		{"unknown metric", `llamacpp:requests_deferred{`, `up{`, `"up"`},
		{"misspelt prefix", `llmload_tpot_seconds_bucket`, `lmload_tpot_seconds_bucket`, `"lmload_tpot_seconds_bucket"`},
		{"misspelt name in a variable", `label_values(llmload_requests_total,`, `label_values(llmload_request_total,`, `"llmload_request_total"`},
		{"misspelt name in a __name__ matcher", `sglang:num_running_reqs|`, `sglang:num_running_req|`, `"sglang:num_running_req"`},
		{"unbalanced query", `sum by (stage, status) (rate(`, `sum by (stage, status) rate(`, `unbalanced`},
		{"duplicate id", `"id": 3,`, `"id": 2,`, `id 2`},
		{"no gridPos", `"gridPos": {`, `"gridPosition": {`, `gridPos`},
		{"off the grid", `"w": 8,`, `"w": 28,`, `grid`},
		{"overlap", `"x": 8,`, `"x": 4,`, `overlaps`},
		{"fixed datasource", `"uid": "${datasource}"`, `"uid": "P1809F7CD0C75ACF3"`, `datasource`},
		{"empty query", `"expr": "sum by (stage, status)`, `"expr": "", "x": "sum by (stage, status)`, `no expr`},
		{"not JSON", `"panels": [`, `"panels": [,`, `invalid`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(data, tc.old) {
				t.Fatalf("the dashboard has no %q to doctor", tc.old)
			}
			errs := check([]byte(strings.ReplaceAll(data, tc.old, tc.new)))
			for _, err := range errs {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
			}
			t.Errorf("no error mentions %q; got %d: %v", tc.want, len(errs), errs[:min(len(errs), 3)])
		})
	}
}

// check returns what is wrong with the dashboard data.
func check(data []byte) []error {
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return []error{fmt.Errorf("invalid JSON: %w", err)}
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if d.UID == "" || d.Title == "" {
		fail("the dashboard needs a uid and a title")
	}
	// 39 is Grafana 11's schema; older ones would migrate the panels on
	// load, and a newer Grafana migrates forward from any.
	if d.SchemaVersion < 39 {
		fail("schemaVersion %d is older than Grafana 11's (39)", d.SchemaVersion)
	}
	errs = append(errs, checkVariables(d.Templating.List)...)
	ids := map[int]string{}
	errs = append(errs, checkPanels(d.Panels, ids)...)
	for _, p := range d.Panels {
		if p.Type == "row" && p.Collapsed {
			errs = append(errs, checkLayout(p.Title, p.Panels)...)
		}
	}
	top := slices.DeleteFunc(slices.Clone(d.Panels), func(p panel) bool { return p.GridPos == nil })
	return append(errs, checkLayout("the dashboard", top)...)
}

// checkVariables checks the template variables and their queries' names.
func checkVariables(vars []variable) []error {
	var errs []error
	byName := map[string]variable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	for _, name := range requiredVariables {
		if _, ok := byName[name]; !ok {
			errs = append(errs, fmt.Errorf("no template variable %s", name))
		}
	}
	if v := byName[datasourceVar]; v.Type != "datasource" || string(v.Query) != `"`+datasourceType+`"` {
		errs = append(errs, fmt.Errorf("variable %s: type %q, query %s; want a %s datasource variable", datasourceVar, v.Type, v.Query, datasourceType))
	}
	for _, v := range vars {
		if v.Type != "query" {
			continue
		}
		where := "variable " + v.Name
		if err := checkDatasource(v.Datasource); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		q, err := variableQuery(v.Query)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		// Grafana shows the definition and runs the query: they must agree.
		if v.Definition != "" && v.Definition != q {
			errs = append(errs, fmt.Errorf("%s: definition %q is not its query %q", where, v.Definition, q))
		}
		errs = append(errs, checkExpr(where, labelValuesSelector(q))...)
	}
	return errs
}

// variableQuery is a query variable's query: Grafana writes Prometheus'
// as {"query": "label_values(...)", ...}, older versions as a string.
func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var o struct{ Query string }
	if err := json.Unmarshal(raw, &o); err != nil || o.Query == "" {
		return "", fmt.Errorf("no query in %s", raw)
	}
	return o.Query, nil
}

// labelValuesSelector is the series selector of label_values(selector,
// label): the label is not a metric; label_values(label) has none.
var labelValuesRE = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

func labelValuesSelector(q string) string {
	if m := labelValuesRE.FindStringSubmatch(q); m != nil {
		return m[1]
	}
	if strings.HasPrefix(strings.TrimSpace(q), "label_values(") {
		return ""
	}
	return q
}

// checkPanels checks panels (and a collapsed row's) and records their ids.
func checkPanels(panels []panel, ids map[int]string) []error {
	var errs []error
	for _, p := range panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		fail := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
		}
		if p.ID <= 0 {
			fail("no id")
		} else if other, dup := ids[p.ID]; dup {
			fail("id %d is also %q's", p.ID, other)
		}
		ids[p.ID] = p.Title
		if p.Type == "" || p.Title == "" {
			fail("no type or title")
		}
		if g := p.GridPos; g == nil {
			fail("no gridPos")
		} else if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > gridWidth {
			fail("gridPos %+v is off the %d-column grid", *g, gridWidth)
		}
		if p.Type == "row" {
			if len(p.Panels) > 0 && !p.Collapsed {
				fail("an expanded row holds panels: Grafana keeps those beside it")
			}
			errs = append(errs, checkPanels(p.Panels, ids)...)
			continue
		}
		if err := checkDatasource(p.Datasource); err != nil {
			fail("%v", err)
		}
		if len(p.Targets) == 0 {
			fail("no targets")
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				fail("refId %q missing or repeated", tg.RefID)
			}
			refs[tg.RefID] = true
			if tg.Datasource != nil {
				if err := checkDatasource(tg.Datasource); err != nil {
					fail("target %s: %v", tg.RefID, err)
				}
			}
			if strings.TrimSpace(tg.Expr) == "" {
				fail("target %s has no expr", tg.RefID)
				continue
			}
			errs = append(errs, checkExpr(where+" target "+tg.RefID, tg.Expr)...)
		}
	}
	return errs
}

func checkDatasource(ds *datasource) error {
	if ds == nil || ds.Type != datasourceType || ds.UID != datasourceUID {
		return fmt.Errorf("datasource %+v, want {%s %s}", ds, datasourceType, datasourceUID)
	}
	return nil
}

// checkLayout reports panels of one view that overlap: Grafana would
// push them about on load, and the layout would not be the one written.
func checkLayout(view string, panels []panel) []error {
	var errs []error
	for i, a := range panels {
		for _, b := range panels[i+1:] {
			if a.GridPos == nil || b.GridPos == nil {
				continue
			}
			ga, gb := *a.GridPos, *b.GridPos
			if ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H {
				errs = append(errs, fmt.Errorf("in %s, panel %d %q overlaps panel %d %q", view, a.ID, a.Title, b.ID, b.Title))
			}
		}
	}
	return errs
}

// checkExpr checks that every metric a query names is one llmload exports
// or one of a server that engine/servermetrics knows.
func checkExpr(where, expr string) []error {
	names, err := metricNames(expr)
	if err != nil {
		return []error{fmt.Errorf("%s: %v in %s", where, err, expr)}
	}
	var errs []error
	for _, name := range names {
		if err := knownName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", where, err))
		}
	}
	return errs
}

// Suffixes of a classic histogram's series.
var histogramSuffixes = []string{"_bucket", "_sum", "_count"}

// histogramBase is name without a classic histogram's suffix.
func histogramBase(name string) string {
	for _, s := range histogramSuffixes {
		if base, ok := strings.CutSuffix(name, s); ok {
			return base
		}
	}
	return name
}

// knownName says why a metric name is not one the dashboard may query.
func knownName(name string) error {
	if strings.HasPrefix(name, "llmload_") {
		if name == histogramBase(name) {
			// A histogram's own name is its native histogram.
			if slices.Contains(exportedSeries(), name) {
				return nil
			}
		} else if slices.Contains(exportedHistograms(), histogramBase(name)) {
			return nil
		}
		return fmt.Errorf("%q is not a series llmload exports", name)
	}
	for _, m := range servermetrics.Metrics() {
		if m.Type != "histogram" && name == m.Name {
			return nil
		}
		if m.Type == "histogram" && name != histogramBase(name) && histogramBase(name) == m.Name {
			return nil
		}
	}
	return fmt.Errorf("%q is neither a series llmload exports nor a server metric engine/servermetrics reads", name)
}

// exportedSeries are the series llmload exports.
func exportedSeries() []string { return export.Names() }

// exportedHistograms are those of them that are histograms: the latencies
// and the schedule lag.
func exportedHistograms() []string { return append(export.Histograms(), export.ScheduleLag) }

// usedNames are the metric names of every query in the dashboard.
func usedNames(t *testing.T, data []byte) []string {
	t.Helper()
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var names []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				n, err := metricNames(tg.Expr)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, n...)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return names
}
