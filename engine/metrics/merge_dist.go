package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/llmload/llmload/engine"
)

// MergeDists joins latency distributions as result files hold them
// (milliseconds, with HDR) into the distribution of all their values.
// Count, Min, Max, Clamped and the percentiles are exact, read from the
// merged histogram as a collector reads its own; CI and Unreliable are
// computed again; Mean is the count-weighted mean of the means, each
// exact to a microsecond, and so within a microsecond. The result has
// Histogram buckets when an input had them. A non-empty Dist without
// HDR, or with a corrupt one, is an error wrapping ErrMerge.
func MergeDists(ds ...Dist) (Dist, error) {
	ts := make([]*trend, 0, len(ds))
	bars := false
	for i, d := range ds {
		t, err := d.trend()
		if err != nil {
			return Dist{}, fmt.Errorf("%w: distribution %d: %w", ErrMerge, i, err)
		}
		ts = append(ts, t)
		bars = bars || d.Histogram != nil
	}
	t := mergeTrends(ts)
	if bars {
		return t.distWithHistogram(), nil
	}
	return t.dist(), nil
}

// tags merges the parts' breakdowns by tag, each value's cell rebuilt
// from its summary, so that the live breakdown's code renders them.
func (g *group) tags() (map[string]map[string]TagSummary, int64, error) {
	var b tagBreakdown
	for i, p := range g.sums {
		b.overflow += p.TagKeysOverflow
		for key, values := range p.ByTag {
			for value, ts := range values {
				c, err := tagCellOf(ts)
				if err != nil {
					return nil, 0, fmt.Errorf("part %d: stage %s/%s: tag %s=%s: %w", g.parts[i], g.id.scenario, g.id.stage, key, value, err)
				}
				b.absorb(key, value, c)
			}
		}
	}
	b.fold()
	return b.summary(), b.overflow, nil
}

// apis merges the parts' breakdowns by endpoint, as tags merges theirs.
// A part without one sent only chat completions: its stage's own figures
// are its chat entry.
func (g *group) apis() (map[string]TagSummary, error) {
	if !slices.ContainsFunc(g.sums, func(p *StageSummary) bool { return p.ByAPI != nil }) {
		return nil, nil
	}
	var b tagBreakdown
	for i, p := range g.sums {
		byAPI := p.ByAPI
		if byAPI == nil && p.Requests > 0 {
			byAPI = map[string]TagSummary{engine.EndpointChat: {Requests: p.Requests, OK: p.OK, Failed: p.Failed,
				TTFT: p.TTFT, TPOT: p.TPOT, E2E: p.E2E}}
		}
		for api, ts := range byAPI {
			c, err := tagCellOf(ts)
			if err != nil {
				return nil, fmt.Errorf("part %d: stage %s/%s: api %s: %w", g.parts[i], g.id.scenario, g.id.stage, api, err)
			}
			b.absorb(apiKey, api, c)
		}
	}
	if len(b.keys[apiKey]) == 0 {
		return nil, nil
	}
	out := make(map[string]TagSummary, len(b.keys[apiKey]))
	for api, c := range b.keys[apiKey] {
		out[api] = c.summary()
	}
	return out, nil
}

// tagCellOf rebuilds a tag value's cell from its summary.
func tagCellOf(ts TagSummary) (*tagCell, error) {
	c := &tagCell{requests: ts.Requests, failed: ts.Failed}
	for _, d := range [...]struct {
		name string
		d    Dist
		into *recorder
	}{{"ttft", ts.TTFT, &c.ttft}, {"tpot", ts.TPOT, &c.tpot}, {"e2e", ts.E2E, &c.e2e}} {
		t, err := d.d.trend()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		d.into.t = *t
	}
	return c, nil
}

// absorb adds o's requests and values to c; o is not modified.
func (c *tagCell) absorb(o *tagCell) {
	c.requests += o.requests
	c.failed += o.failed
	for _, r := range [...][2]*recorder{{&c.ttft, &o.ttft}, {&c.tpot, &o.tpot}, {&c.e2e, &o.e2e}} {
		r[0].t = *mergeTrends([]*trend{&r[0].t, &r[1].t})
	}
}

// absorb adds a part's cell of one tag value.
func (b *tagBreakdown) absorb(key, value string, c *tagCell) {
	if b.keys == nil {
		b.keys = map[string]map[string]*tagCell{}
	}
	values := b.keys[key]
	if values == nil {
		values = map[string]*tagCell{}
		b.keys[key] = values
	}
	if prev, ok := values[value]; ok {
		prev.absorb(c)
		return
	}
	values[value] = c
}

// fold applies the caps of a single collector to the union of the parts'
// keys and values, which may exceed them. It keeps the keys and values
// with the most requests, where a collector keeps the first seen, which
// the parts cannot tell: further values join OtherTagValue, and further
// keys are dropped, their (request, key) pairs counted in overflow.
func (b *tagBreakdown) fold() {
	for _, values := range b.keys {
		foldValues(values)
	}
	if len(b.keys) <= MaxTagKeys {
		return
	}
	requests := func(key string) (n int64) {
		for _, c := range b.keys[key] {
			n += c.requests
		}
		return n
	}
	keys := slices.Collect(maps.Keys(b.keys))
	byRequests(keys, requests)
	for _, key := range keys[MaxTagKeys:] {
		b.overflow += requests(key)
		delete(b.keys, key)
	}
}

// foldValues keeps the MaxTagValues values with the most requests and
// gathers the others under OtherTagValue.
func foldValues(values map[string]*tagCell) {
	names := slices.DeleteFunc(slices.Collect(maps.Keys(values)), func(v string) bool { return v == OtherTagValue })
	if len(names) <= MaxTagValues {
		return
	}
	byRequests(names, func(v string) int64 { return values[v].requests })
	other := values[OtherTagValue]
	for _, v := range names[MaxTagValues:] {
		if other == nil {
			other = values[v]
		} else {
			other.absorb(values[v])
		}
		delete(values, v)
	}
	values[OtherTagValue] = other
}

// byRequests sorts names by their requests, descending, ties by name.
func byRequests(names []string, requests func(string) int64) {
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(requests(y), requests(x)), cmp.Compare(x, y))
	})
}
