package analysis

import (
	"fmt"
	"strconv"
)

// Verdicts of a ServerCheck.
const (
	ServerAgrees    = "agrees"
	ServerDisagrees = "disagrees"
)

// QueueFormed is the mean number of waiting requests over a level's window
// from which the server is said to queue: half a request waiting on
// average is a queue that held for much of the window, not one burst at
// its start.
const QueueFormed = 0.5

// ServerRule states how the server's series are read, in words.
var ServerRule = fmt.Sprintf("the mean of the server's waiting and running gauges over each level's window; its queue grows from the first level "+
	"whose mean waiting is >= %g, its running requests are at a plateau from the first level where they grew < %.0f%% of "+
	"proportional to load; a cliff agrees when the queue formed at or before it (or, with none, running was at a plateau), "+
	"a knee when either did by the level after it; a TTFT p50 cliff with neither (Little's law: half the requests waiting fill the mean queue), "+
	"or a queue without a cliff, disagrees",
	QueueFormed, 100*KneeEfficiency)

// ServerCheck is what the server's own series say about a finding.
type ServerCheck struct {
	// Verdict is ServerAgrees, ServerDisagrees, or "" when the series
	// neither confirm nor contradict the finding.
	Verdict string `json:"verdict,omitempty"`
	Text    string `json:"text"`
	// Stage is where the server's queue formed (or, with none, where its
	// running requests reached a plateau), with the Series read and its
	// means at the level before (From) and at Stage (To); "" when neither
	// happened.
	Stage  string  `json:"stage,omitempty"`
	Series string  `json:"series,omitempty"`
	From   float64 `json:"from"`
	To     float64 `json:"to"`
}

// change is where a gauge crossed its rule along a curve: level i (-1
// when it never did), with its means before and at i.
type change struct {
	i        int
	series   string
	from, to float64
}

// queueOnset is the first level whose mean waiting is at least
// QueueFormed.
func (c *ServerCurve) queueOnset() change {
	for i, l := range c.Levels {
		if l.Waiting != nil && *l.Waiting >= QueueFormed {
			return change{i, c.Waiting, c.before(i, func(l ServerLevel) *float64 { return l.Waiting }), *l.Waiting}
		}
	}
	return change{i: -1, series: c.Waiting}
}

// plateau is the first level whose running requests grew less than
// KneeEfficiency of proportional to load from the level before.
func (c *ServerCurve) plateau() change {
	for i := 1; i < len(c.Levels); i++ {
		a, b := c.Levels[i-1], c.Levels[i]
		if a.Running == nil || b.Running == nil || *a.Running < 1 {
			continue
		}
		if (*b.Running / *a.Running - 1)/(b.Load/a.Load-1) < KneeEfficiency {
			return change{i, c.Running, *a.Running, *b.Running}
		}
	}
	return change{i: -1, series: c.Running}
}

// before is a gauge's mean at the level before i that has one; 0 for none.
func (c *ServerCurve) before(i int, v func(ServerLevel) *float64) float64 {
	for j := i - 1; j >= 0; j-- {
		if m := v(c.Levels[j]); m != nil {
			return *m
		}
	}
	return 0
}

// index is the level of stage; -1 when the curve has none.
func (c *ServerCurve) index(stage string) int {
	for i, l := range c.Levels {
		if l.Stage == stage {
			return i
		}
	}
	return -1
}

// gaugeText renders a gauge's mean: "3.9", "0.033", "12".
func gaugeText(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}
