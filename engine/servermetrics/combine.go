package servermetrics

import (
	"fmt"
	"slices"
	"strings"
)

// Additive says whether a series' values add up across endpoints into the
// figure of the whole service: requests held (running, waiting), tokens
// held, rates of tokens or events, and counts per scrape interval. Fractions (cache use, hit ratios)
// and latencies do not: a mean of two replicas' cache use would hide the
// full one, so they stay per endpoint.
func Additive(s *Series) bool {
	switch s.Unit {
	case UnitRequests, UnitTokens, UnitTokensPerSecond, UnitPerSecond, UnitCount:
		return true
	}
	return false
}

// combine joins the endpoints' Results: the GPU exporters' go to GPUs,
// apart; of the servers', one endpoint's is returned as it is, and
// several give a Result holding each one's in Endpoints and, in Series,
// the sums of their additive series. Only GPU exporters: a Result with
// nothing but GPUs.
func combine(all []*Result) *Result {
	var rs []*Result
	var gpus []Result
	for _, r := range all {
		if r.GPUOnly || r.Server == ServerDCGM {
			gpus = append(gpus, *r)
		} else {
			rs = append(rs, r)
		}
	}
	out := combineServers(rs)
	out.GPUs = gpus
	return out
}

// combineServers joins the servers' Results (see combine).
func combineServers(rs []*Result) *Result {
	switch len(rs) {
	case 0:
		return &Result{Series: []Series{}}
	case 1:
		return rs[0]
	}
	out := &Result{EveryS: rs[0].EveryS, Server: commonKind(rs)}
	for _, r := range rs {
		out.Scrapes += r.Scrapes
		out.Failures += r.Failures
		out.Endpoints = append(out.Endpoints, *r)
	}
	out.Series = sums(rs)
	out.Note = out.Explain()
	return out
}

// commonKind is the server kind every endpoint has, "" when they differ.
func commonKind(rs []*Result) string {
	kind := rs[0].ServerKind()
	for _, r := range rs[1:] {
		if r.ServerKind() != kind {
			return ""
		}
	}
	return kind
}

// sumKey is what makes series of several endpoints one quantity: their
// role, whichever server's names they have, or their name without one.
func sumKey(s *Series) string {
	if r := RoleOf(s); r != "" {
		return "role:" + string(r)
	}
	return "name:" + s.Name
}

// sums are the additive series every endpoint has, summed round by round
// (see sumSeries), in the order the endpoints list them. A quantity some
// endpoint lacks has no sum: it would pass a part for the whole.
func sums(rs []*Result) []Series {
	out := []Series{}
	for i := range rs[0].Series {
		first := &rs[0].Series[i]
		if !Additive(first) {
			continue
		}
		parts := []*Series{first}
		for _, r := range rs[1:] {
			if s := findKey(r, sumKey(first)); s != nil {
				parts = append(parts, s)
			}
		}
		if len(parts) < len(rs) {
			continue
		}
		if s := sumSeries(parts); len(s.T) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// findKey returns r's additive series with key k, or nil.
func findKey(r *Result, k string) *Series {
	for i := range r.Series {
		if s := &r.Series[i]; Additive(s) && sumKey(s) == k {
			return s
		}
	}
	return nil
}

// sumSeries adds the parts' values of each scrape round every part has a
// point in, at the latest of their times; a round an endpoint missed (a
// failed scrape) has no sum rather than a dip. It is named "sum(...)"
// after the parts' names.
func sumSeries(parts []*Series) Series {
	first := parts[0]
	var names []string
	for _, p := range parts {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	out := Series{Name: "sum(" + strings.Join(names, ", ") + ")", Role: RoleOf(first), Unit: first.Unit,
		Help: fmt.Sprintf("the sum over %d endpoints of %s", len(parts), strings.Join(names, ", "))}
	at := make([]map[int]int, len(parts)) // round → point index, per part
	for i, p := range parts {
		at[i] = make(map[int]int, len(p.rounds))
		for j, round := range p.rounds {
			at[i][round] = j
		}
	}
	for k, round := range first.rounds {
		t, v, ok := first.T[k], first.V[k], true
		for i, p := range parts[1:] {
			j, has := at[i+1][round]
			if !has {
				ok = false
				break
			}
			t, v = max(t, p.T[j]), v+p.V[j]
		}
		if ok {
			out.T, out.V, out.rounds = append(out.T, t), append(out.V, v), append(out.rounds, round)
		}
	}
	return out
}
