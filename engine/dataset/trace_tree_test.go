package dataset

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

var agent = TraceFormat{Kind: TraceAgent}

// node is what a tree test compares of a record.
type node struct {
	ID     string
	At     time.Duration
	Parent int // 1 + the parent's index
	Delay  time.Duration
	Depth  int
	Line   int
}

func nodes(tr *Trace) []node {
	out := make([]node, len(tr.Records))
	for i, r := range tr.Records {
		out[i] = node{r.ID, r.At, r.Parent, r.Delay, r.Depth, r.Line}
	}
	return out
}

func TestLoadTraceTrees(t *testing.T) {
	ms := time.Millisecond
	named := TraceFormat{Kind: TraceJSONL, Fields: TraceFields{ID: "request_id", Parent: "parent_id", Delay: "gap"}, DelayUnit: "s"}
	tests := []struct {
		name, file, content string
		f                   TraceFormat
		want                []node
	}{
		{"agent: children named before their parents, sorted after them", "a.jsonl",
			`{"id": "c", "parent": "b", "delay_ms": 0, "input_length": 4, "output_length": 1}
{"id": "b", "parent": "a", "delay_ms": 250, "input_length": 4, "output_length": 1}
{"id": "a", "timestamp": 1000, "session": "s1", "input_length": 4, "output_length": 1}
{"id": "d", "timestamp": 1100, "input_length": 4, "output_length": 1}
`, agent, []node{
				{"a", 0, 0, 0, 0, 3}, {"d", 100 * ms, 0, 0, 0, 4},
				{"b", 250 * ms, 1, 250 * ms, 1, 2}, {"c", 250 * ms, 3, 0, 2, 1},
			}},
		{"jsonl with named fields and a delay unit; a child's own time is not read", "n.jsonl",
			`{"request_id": 7, "ts": 0, "input_length": 4, "output_length": 1}
{"request_id": 8, "parent_id": 7, "gap": 1.5, "ts": "not read", "input_length": 4, "output_length": 1}
{"request_id": 9, "parent_id": 7, "gap": 0.5, "input_length": 4, "output_length": 1}
`, TraceFormat{Kind: named.Kind, Fields: TraceFields{Time: "ts", ID: "request_id", Parent: "parent_id", Delay: "gap"}, DelayUnit: "s"},
			[]node{{"7", 0, 0, 0, 0, 1}, {"9", 500 * ms, 1, 500 * ms, 1, 3}, {"8", 1500 * ms, 1, 1500 * ms, 1, 2}}},
		{"csv with named columns", "n.csv", "id,pid,gap_ms,timestamp,input_length,output_length\n" +
			"r1,,,0,4,1\nr2,r1,30,,4,1\n",
			TraceFormat{Kind: TraceCSV, Fields: TraceFields{ID: "id", Parent: "pid", Delay: "gap_ms"}},
			[]node{{"r1", 0, 0, 0, 0, 2}, {"r2", 30 * ms, 1, 30 * ms, 1, 3}}},
		{"AIPerf's multi-turn Mooncake rows: a delay follows the session's previous row", "m.jsonl",
			`{"session_id": "abc", "timestamp": 0, "input_length": 300, "output_length": 40}
{"session_id": "xyz", "timestamp": 10, "input_length": 300, "output_length": 40}
{"session_id": "abc", "delay": 2, "input_length": 150, "output_length": 20}
{"session_id": "abc", "delay": 5, "input_length": 150, "output_length": 20}
`, mooncake, []node{{"", 0, 0, 0, 0, 1}, {"", 2 * ms, 1, 2 * ms, 1, 3}, {"", 7 * ms, 2, 5 * ms, 2, 4}, {"", 10 * ms, 0, 0, 0, 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, _, err := loadTraceText(t, tc.file, tc.content, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			got := nodes(tr)
			if len(got) != len(tc.want) {
				t.Fatalf("records %+v\nwant    %+v", got, tc.want)
			}
			children := 0
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("record %d: %+v, want %+v", i, got[i], tc.want[i])
				}
				if got[i].Parent != 0 {
					children++
				}
			}
			if tr.Children != children {
				t.Errorf("Children = %d, want %d", tr.Children, children)
			}
		})
	}
}

func TestLoadTraceTreeErrors(t *testing.T) {
	rec := func(fields string) string { return `{` + fields + `, "input_length": 4, "output_length": 1}` + "\n" }
	tests := []struct {
		name, file, content string
		f                   TraceFormat
		want                string
	}{
		{"missing parent", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "b", "parent": "x", "delay_ms": 1`), agent,
			`:2: parent: no record has id "x"`},
		{"cycle", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "b", "parent": "c", "delay_ms": 1`) +
			rec(`"id": "c", "parent": "d", "delay_ms": 1`) + rec(`"id": "d", "parent": "b", "delay_ms": 1`), agent,
			`:2: parent: the parent ids form a cycle (line 2 → line 3 → line 4 → line 2)`},
		{"own parent", "a.jsonl", rec(`"id": "a", "parent": "a", "delay_ms": 1`), agent,
			`:1: parent: the parent ids form a cycle (line 1 → line 1)`},
		{"negative delay", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "b", "parent": "a", "delay_ms": -5`), agent,
			`:2: delay_ms: expected a non-negative number (in ms), got -5`},
		{"a delay that is not a number", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "b", "parent": "a", "delay_ms": "soon"`), agent,
			`:2: delay_ms: expected a non-negative number (in ms), got a string`},
		{"a child without a delay", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "b", "parent": "a"`), agent,
			`:2: delay_ms: missing: a record with a parent starts its delay after the parent's answer`},
		{"duplicate ids", "a.jsonl", rec(`"id": "a", "timestamp": 0`) + rec(`"id": "a", "timestamp": 5`), agent,
			`:2: id: "a" is also line 1's id: ids must be unique`},
		{"a root without a time", "a.jsonl", rec(`"id": "a"`), agent, `:1: timestamp: missing`},
		{"a parent id of the wrong type", "a.jsonl", rec(`"id": "a", "parent": [1], "delay_ms": 0`), agent,
			`:1: parent: expected a string or a number, got an array`},
		{"csv negative delay", "n.csv", "id,parent,delay,timestamp,input_length,output_length\nr1,,,0,4,1\nr2,r1,-1,,4,1\n",
			TraceFormat{Kind: TraceCSV, Fields: TraceFields{ID: "id", Parent: "parent"}},
			`:3: delay: expected a non-negative number (in ms), got -1`},
		{"csv missing parent", "n.csv", "id,parent,delay,timestamp,input_length,output_length\nr1,,,0,4,1\nr2,r9,1,,4,1\n",
			TraceFormat{Kind: TraceCSV, Fields: TraceFields{ID: "id", Parent: "parent"}},
			`:3: parent: no record has id "r9"`},
		{"AIPerf delay without a session", "m.jsonl", rec(`"timestamp": 0`) + rec(`"delay": 2`), mooncake,
			`:2: delay: a record with a delay follows its session's previous record, and this one has no session_id`},
		{"AIPerf delay on a session's first row", "m.jsonl", rec(`"session_id": "s", "delay": 2`), mooncake,
			`:1: delay: the first record of session "s" has no earlier record to follow: give it a timestamp instead`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, path, err := loadTraceText(t, tc.file, tc.content, tc.f)
			if err == nil || !strings.HasPrefix(err.Error(), path+tc.want) {
				t.Errorf("err = %v\nwant %s%s", err, path, tc.want)
			}
		})
	}
}

// agentTree is a root at 0 with two children, one of which has a child,
// a second session's root at 100ms, and its child.
const agentTree = `{"id": "p", "session": "s1", "timestamp": 0, "input_length": 4, "output_length": 1}
{"id": "w1", "parent": "p", "session": "s1", "delay_ms": 10, "input_length": 4, "output_length": 1}
{"id": "w2", "parent": "p", "session": "s1", "delay_ms": 20, "input_length": 4, "output_length": 1}
{"id": "j", "parent": "w1", "session": "s1", "delay_ms": 40, "input_length": 4, "output_length": 1}
{"id": "q", "session": "s2", "timestamp": 100, "input_length": 4, "output_length": 1}
{"id": "q1", "parent": "q", "session": "s2", "delay_ms": 5, "input_length": 4, "output_length": 1}
`

func TestReplayTrees(t *testing.T) {
	ms := time.Millisecond
	tr, _, err := loadTraceText(t, "a.jsonl", agentTree, agent)
	if err != nil {
		t.Fatal(err)
	}
	// In order of earliest time: p 0, w1 10, w2 20, j 50, q 100, q1 105.
	tests := []struct {
		name string
		o    ReplayOptions
		want []plan.TraceArrival
	}{
		{"whole, at 2×", ReplayOptions{Speedup: 2}, []plan.TraceArrival{
			{At: 0, Record: 0}, {At: 5 * ms, Record: 1, Parent: 1, Delay: 5 * ms},
			{At: 10 * ms, Record: 2, Parent: 1, Delay: 10 * ms}, {At: 25 * ms, Record: 3, Parent: 2, Delay: 20 * ms},
			{At: 50 * ms, Record: 4}, {At: 52500 * time.Microsecond, Record: 5, Parent: 5, Delay: 2500 * time.Microsecond},
		}},
		{"a slice leaves out children whose parent it cut", ReplayOptions{TimeOffset: 15 * ms, Sessions: true}, []plan.TraceArrival{
			{At: 0, Record: 4, Session: 1}, {At: 5 * ms, Record: 5, Session: 1, Parent: 1, Delay: 5 * ms},
		}},
		{"warm_turns 1 warms the roots", ReplayOptions{Limit: 4, WarmTurns: 1}, []plan.TraceArrival{
			{At: 0, Record: 0, Warm: true}, {At: 10 * ms, Record: 1, Parent: 1, Delay: 10 * ms},
			{At: 20 * ms, Record: 2, Parent: 1, Delay: 20 * ms}, {At: 50 * ms, Record: 3, Parent: 2, Delay: 40 * ms},
		}},
		{"warm_turns 2 warms two levels", ReplayOptions{Limit: 4, WarmTurns: 2}, []plan.TraceArrival{
			{At: 0, Record: 0, Warm: true}, {At: 10 * ms, Record: 1, Parent: 1, Delay: 10 * ms, Warm: true},
			{At: 20 * ms, Record: 2, Parent: 1, Delay: 20 * ms, Warm: true}, {At: 50 * ms, Record: 3, Parent: 2, Delay: 40 * ms},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tr.Replay(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Arrivals) != len(tc.want) {
				t.Fatalf("arrivals %+v\nwant     %+v", r.Arrivals, tc.want)
			}
			children := 0
			for i, a := range r.Arrivals {
				if a != tc.want[i] {
					t.Errorf("arrival %d: %+v, want %+v", i, a, tc.want[i])
				}
				if a.Parent != 0 {
					children++
				}
			}
			if r.Children != children || !r.Stretches() || r.WarmTurns != tc.o.WarmTurns {
				t.Errorf("Children %d (want %d), Stretches %v, WarmTurns %d", r.Children, children, r.Stretches(), r.WarmTurns)
			}
		})
	}
}

// Without trees, warm_turns counts each session's turns.
func TestReplayWarmTurnsOfSessions(t *testing.T) {
	content := ""
	for i, s := range []string{"a", "b", "a", "a", "b", "c"} {
		content += `{"timestamp": ` + string(rune('0'+i)) + `, "session_id": "` + s + `", "input_length": 4, "output_length": 1}` + "\n"
	}
	tr, _, err := loadTraceText(t, "m.jsonl", content, mooncake)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tr.Replay(ReplayOptions{Sessions: true, WarmTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	var warm []bool
	for _, a := range r.Arrivals {
		warm = append(warm, a.Warm)
	}
	if want := []bool{true, true, true, false, true, true}; !equalBools(warm, want) {
		t.Errorf("warm %v, want %v", warm, want)
	}
	if _, err := tr.Replay(ReplayOptions{WarmTurns: -1}); err == nil || err.Error() != "warm_turns -1: want 0 or more" {
		t.Errorf("err = %v, want warm_turns refused", err)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
