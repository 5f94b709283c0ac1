package servermetrics

import "slices"

// Part is one part of a request's time on the server over a window: the
// p50 and p99 in ms and the metric they came from.
type Part struct {
	// P50MS is the mean of the scrape intervals' medians in the window,
	// P99MS the worst interval's p99 (see Series.Within); either is
	// absent (nil) when no interval in the window had it.
	P50MS *float64 `json:"p50_ms,omitempty"`
	P99MS *float64 `json:"p99_ms,omitempty"`
	// Metric is the server's histogram, "vllm:request_prefill_time_seconds".
	Metric string `json:"metric"`
	// Endpoints is how many endpoints gave it: over several, the p50 is
	// their mean, the p99 their worst.
	Endpoints int `json:"endpoints,omitempty"`
}

// Parts are the server's own queue, prefill and decode times of the
// requests over a window, from its /metrics histograms; a part the server
// does not expose is nil.
type Parts struct {
	Server    string `json:"server"` // ServerVLLM ...
	Queue     *Part  `json:"queue,omitempty"`
	Prefill   *Part  `json:"prefill,omitempty"`
	Decode    *Part  `json:"decode,omitempty"`
	Inference *Part  `json:"inference,omitempty"` // prefill and decode together
}

// StageParts is the server's queue, prefill and decode p50 and p99 over
// the window (from, to], in seconds since the run start as the series'
// times are: of the one endpoint, or of several the mean p50 and worst
// p99 of those that have each. ok is false when no part has a figure.
func StageParts(r *Result, from, to float64) (p Parts, ok bool) {
	if r == nil {
		return Parts{}, false
	}
	p.Server = r.ServerKind()
	for _, x := range []struct {
		role Role
		into **Part
	}{{RoleQueueTime, &p.Queue}, {RolePrefillTime, &p.Prefill}, {RoleDecodeTime, &p.Decode}, {RoleInference, &p.Inference}} {
		if part := stagePart(serverResults(r), x.role, from, to); part != nil {
			*x.into, ok = part, true
		}
	}
	return p, ok
}

// serverResults are the Results a server figure is read from: the endpoints of
// several, else the one.
func serverResults(r *Result) []*Result {
	if len(r.Endpoints) == 0 {
		return []*Result{r}
	}
	out := make([]*Result, len(r.Endpoints))
	for i := range r.Endpoints {
		out[i] = &r.Endpoints[i]
	}
	return out
}

// stagePart reads one latency role's p50 and p99 over the window.
func stagePart(rs []*Result, role Role, from, to float64) *Part {
	var p50s []float64
	var p99 *float64
	part := &Part{}
	for _, r := range rs {
		got := false
		if s := r.ByRole(role.P50()); s != nil {
			if v, ok := s.Within(from, to); ok {
				p50s, got = append(p50s, v), true
				part.Metric = baseName(s.Name)
			}
		}
		if s := r.ByRole(role.P99()); s != nil {
			if v, ok := s.Within(from, to); ok {
				if p99 == nil || v > *p99 {
					p99 = &v
				}
				got = true
				part.Metric = baseName(s.Name)
			}
		}
		if got {
			part.Endpoints++
		}
	}
	if part.Endpoints == 0 {
		return nil
	}
	if len(p50s) > 0 {
		m := average(p50s)
		part.P50MS = &m
	}
	part.P99MS = p99
	if part.Endpoints == 1 {
		part.Endpoints = 0
	}
	return part
}

// baseName is a quantile series' histogram: its name without ":p50".
func baseName(name string) string {
	for _, q := range quantiles {
		if len(name) > len(q.suffix) && name[len(name)-len(q.suffix):] == q.suffix {
			return name[:len(name)-len(q.suffix)]
		}
	}
	return name
}

func average(vs []float64) float64 {
	total := 0.0
	for _, v := range vs {
		total += v
	}
	return total / float64(len(vs))
}

// Spec is the server's speculative decoding over a window.
type Spec struct {
	Server string `json:"server"`
	// AcceptRate is the share of draft tokens accepted, 0..1:
	// Δaccepted ÷ Δdraft tokens (vLLM), or the mean of SGLang's gauge.
	AcceptRate *float64 `json:"accept_rate,omitempty"`
	// AcceptLength is the mean tokens per decoding step, the bonus token
	// included: 1 + Δaccepted ÷ Δdrafts (vLLM's definition), or the mean
	// of SGLang's gauge.
	AcceptLength *float64 `json:"accept_length,omitempty"`
	// Drafts, DraftTokens and Accepted are vLLM's counters' increases
	// over the window; 0 for SGLang.
	Drafts      float64 `json:"drafts,omitempty"`
	DraftTokens float64 `json:"draft_tokens,omitempty"`
	Accepted    float64 `json:"accepted,omitempty"`
	// PerPosition is vLLM's acceptance rate at each draft position, 0..1:
	// Δaccepted there ÷ Δdrafts; absent without its counter.
	PerPosition []float64 `json:"per_position,omitempty"`
	// Metrics names what the figures came from.
	Metrics []string `json:"metrics"`
}

// StageSpec is the server's speculative decoding over the window (from,
// to] (seconds since the run start): from vLLM's counters, summed over
// the endpoints that have them, or SGLang's gauges, averaged. ok is false when the server
// exposes none, or no draft was made in the window.
func StageSpec(r *Result, from, to float64) (s Spec, ok bool) {
	if r == nil {
		return Spec{}, false
	}
	s.Server = r.ServerKind()
	drafts, dOK := increase(r, RoleSpecDrafts, from, to, &s.Metrics)
	tokens, tOK := increase(r, RoleSpecDraftTokens, from, to, &s.Metrics)
	accepted, aOK := increase(r, RoleSpecAccepted, from, to, &s.Metrics)
	if aOK && tOK && tokens > 0 {
		s.DraftTokens, s.Accepted = tokens, accepted
		rate := accepted / tokens
		s.AcceptRate, ok = &rate, true
	}
	if aOK && dOK && drafts > 0 {
		s.Drafts, s.Accepted = drafts, accepted
		length := 1 + accepted/drafts
		s.AcceptLength, ok = &length, true
	}
	if dOK && drafts > 0 {
		var names []string
		for pos := 0; ; pos++ {
			v, has := increase(r, RoleSpecAcceptedAt(pos), from, to, &names)
			if !has {
				break
			}
			s.PerPosition = append(s.PerPosition, v/drafts)
		}
		if len(names) > 0 {
			s.Metrics = append(s.Metrics, specPerPos)
		}
	}
	if ok {
		return s, true
	}
	s.Metrics = nil
	if v, has := gaugeMeanOver(r, RoleSpecAcceptRate, from, to, &s.Metrics); has {
		s.AcceptRate, ok = &v, true
	}
	if v, has := gaugeMeanOver(r, RoleSpecAcceptLength, from, to, &s.Metrics); has {
		s.AcceptLength, ok = &v, true
	}
	return s, ok
}

// increase sums a role's increases over the window and over the
// endpoints that have it: a sum of increases is exact per endpoint, where
// the endpoints' summed series would miss a round one of them failed.
// The series' names are added to names.
func increase(r *Result, role Role, from, to float64, names *[]string) (float64, bool) {
	total, n := 0.0, 0
	for _, e := range serverResults(r) {
		s := e.ByRole(role)
		if s == nil {
			continue
		}
		s.each(from, to, func(v float64) { total += v; n++ })
		if !slices.Contains(*names, s.Name) {
			*names = append(*names, s.Name)
		}
	}
	return total, n > 0
}

// gaugeMeanOver averages a gauge role over the window and over the
// endpoints that have it.
func gaugeMeanOver(r *Result, role Role, from, to float64, names *[]string) (float64, bool) {
	var vs []float64
	for _, e := range serverResults(r) {
		if s := e.ByRole(role); s != nil {
			if v, ok := s.Mean(from, to); ok {
				vs = append(vs, v)
				if !slices.Contains(*names, s.Name) {
					*names = append(*names, s.Name)
				}
			}
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	return average(vs), true
}
