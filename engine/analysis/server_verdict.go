package analysis

import "strings"

// check reads the server's series against f, the knee or cliff of a sweep
// in unit; nil when the series have nothing to say about it.
func (c *ServerCurve) check(f Finding, unit string) *ServerCheck {
	at := -1
	if f.Found {
		if at = c.index(f.Stage); at < 0 {
			return nil
		}
	}
	r := reader{c, unit, c.queueOnset(), c.plateau()}
	if f.Kind == KindKnee {
		return r.knee(at)
	}
	return r.cliff(at, f.Metric)
}

// unseen says why a cliff read from metric need not show in the server's
// mean queue, or "" when it must: by Little's law the mean queue is the
// arrival rate times the mean wait, so the median TTFT jumping (half the
// requests waiting) fills it, while a p90 or p99 is a few requests' wait
// and E2E grows in decode too, which no queue shows.
func unseen(metric string) string {
	switch {
	case metric == "ttft_p50":
		return ""
	case strings.HasPrefix(metric, "e2e_"):
		return "E2E grows in decode too, which a queue does not show"
	}
	return "a tail of a few waiting requests need not show in the mean queue"
}

// reader words a curve's queue onset and running plateau.
type reader struct {
	c    *ServerCurve
	unit string
	q, p change
}

// cliff: a client cliff at level at (-1: none), read from metric, agrees
// with a queue formed by then, or else with a full batch; with neither,
// a cliff the mean queue must show (see unseen) is not the server's wait.
// A queue with no cliff at all is the disagreement the other way round.
func (r reader) cliff(at int, metric string) *ServerCheck {
	q, p := r.q, r.p
	switch {
	case at < 0 && q.i >= 0:
		return r.verdict(ServerDisagrees, q, r.queue(false)+" but the client sees no cliff")
	case at < 0 && r.c.Waiting != "":
		return r.verdict(ServerAgrees, q, r.queue(false))
	case at < 0:
		return nil
	case q.i >= 0 && q.i <= at:
		return r.verdict(ServerAgrees, q, r.queue(false))
	case p.i >= 0 && p.i <= at:
		return r.verdict(ServerAgrees, p, joinNonEmpty(", ", r.running(at), r.queue(true)))
	}
	if why := unseen(metric); why != "" {
		return r.verdict("", q, joinNonEmpty(" and ", r.queue(q.i > at), r.running(at))+": "+why)
	}
	return r.verdict(ServerDisagrees, q, joinNonEmpty(" and ", r.queue(q.i > at), r.running(at))+
		": the delay may be client-side or in the network")
}

// knee: a knee at level at saturates the server by the next level, so a
// queue or a plateau by then agrees; one later neither confirms nor
// contradicts it (a server whose slots share one processor admits more
// than it completes); neither at all disagrees.
func (r reader) knee(at int) *ServerCheck {
	q, p, last := r.q, r.p, len(r.c.Levels)-1
	switch {
	case at < 0 && q.i >= 0:
		return r.verdict("", q, r.queue(false))
	case at < 0 && r.c.Waiting != "":
		return r.verdict(ServerAgrees, q, r.queue(false))
	case at < 0:
		return nil
	case q.i >= 0 && q.i <= at+1:
		return r.verdict(ServerAgrees, q, r.queue(false))
	case p.i >= 0 && p.i <= at+1:
		return r.verdict(ServerAgrees, p, r.running(at+1))
	case q.i >= 0:
		return r.verdict("", q, r.queue(true))
	case p.i >= 0:
		return r.verdict("", p, r.running(last))
	}
	return r.verdict(ServerDisagrees, q, joinNonEmpty(" and ", r.queue(false), r.running(last))+
		": throughput may be limited client-side or in the network")
}

func (r reader) verdict(v string, ch change, text string) *ServerCheck {
	sc := &ServerCheck{Verdict: v, Text: text}
	if ch.i >= 0 {
		sc.Stage, sc.Series, sc.From, sc.To = r.c.Levels[ch.i].Stage, ch.series, ch.from, ch.to
	}
	return sc
}

// queue words the queue onset: "queue grows from 8 VUs (name 0 → 3.9)",
// with only when it came after the finding; "" without a waiting gauge.
func (r reader) queue(only bool) string {
	c, q := r.c, r.q
	switch {
	case c.Waiting == "":
		return ""
	case q.i < 0:
		most := c.most(func(l ServerLevel) *float64 { return l.Waiting })
		if most == 0 {
			return "queue empty (" + c.Waiting + " 0 at every level)"
		}
		return "queue flat (" + c.Waiting + " ≤ " + gaugeText(most) + " at every level)"
	case q.i == 0:
		return "queue from the first level (" + c.Waiting + " " + gaugeText(q.to) + " at " + loadText(c.Levels[0].Load, r.unit) + ")"
	}
	word := "queue grows from "
	if only {
		word = "queue grows only from "
	}
	return word + loadText(c.Levels[q.i].Load, r.unit) + " (" + q.series + " " + gaugeText(q.from) + " → " + gaugeText(q.to) + ")"
}

// running words the running requests up to level upto: at a plateau from
// a level by then, or not; "" without a running gauge.
func (r reader) running(upto int) string {
	c, p := r.c, r.p
	if c.Running == "" {
		return ""
	}
	if p.i >= 0 && p.i <= upto {
		return "running at a plateau from " + loadText(c.Levels[p.i].Load, r.unit) + " (" + p.series + " " +
			gaugeText(p.from) + " → " + gaugeText(p.to) + ")"
	}
	var seen []string
	for _, l := range c.Levels[:upto+1] {
		if l.Running != nil {
			seen = append(seen, gaugeText(*l.Running))
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return "running not at a plateau (" + c.Running + " " + strings.Join([]string{seen[0], seen[len(seen)-1]}, " → ") + ")"
}

// most is the largest of a gauge's level means; 0 when none has one.
func (c *ServerCurve) most(v func(ServerLevel) *float64) float64 {
	m := 0.0
	for _, l := range c.Levels {
		if x := v(l); x != nil && *x > m {
			m = *x
		}
	}
	return m
}
