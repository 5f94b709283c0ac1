package metrics

import "time"

// snap merges the group's cells into one stage of the merged snapshot.
func (g *group) snap(kinds map[string]kind) stageSnap {
	ss := stageSnap{
		scenario: g.id.scenario, stage: g.id.stage, index: g.id.index,
		dirty: map[string][numVerdicts]int64{},
	}
	ss.start, ss.end, ss.timed = g.window()
	parts := make([]cellSnap, len(g.snaps))
	for id := range ss.cells {
		for i, s := range g.snaps {
			parts[i] = s.cells[id]
		}
		ss.cells[id] = mergeCells(builtins[id].kind, parts)
	}
	checks, custom := make([]map[string]cellSnap, len(g.snaps)), make([]map[string]cellSnap, len(g.snaps))
	for i, s := range g.snaps {
		checks[i], custom[i] = s.checks, s.custom
	}
	ss.checks = mergeNamed(checks, func(string) kind { return kindRate })
	ss.custom = mergeNamed(custom, func(name string) kind { return kinds[name] })
	for _, s := range g.snaps {
		for name, v := range s.dirty {
			sum := ss.dirty[name]
			for i := range sum {
				sum[i] += v[i]
			}
			ss.dirty[name] = sum
		}
	}
	return ss
}

// mergeNamed merges cells by name across the parts' maps of them.
func mergeNamed(parts []map[string]cellSnap, kindOf func(string) kind) map[string]cellSnap {
	named := map[string][]cellSnap{}
	for _, cs := range parts {
		for name, c := range cs {
			named[name] = append(named[name], c)
		}
	}
	out := make(map[string]cellSnap, len(named))
	for name, cs := range named {
		out[name] = mergeCells(kindOf(name), cs)
	}
	return out
}

// window spans the parts that have a window: the earliest start to the
// latest end. When none has one the stage has none either, and sits at
// the latest end, as a single collector puts it at its close.
func (g *group) window() (start, end time.Time, timed bool) {
	for _, s := range g.snaps {
		if !s.timed {
			continue
		}
		if !timed || s.start.Before(start) {
			start = s.start
		}
		if !timed || s.end.After(end) {
			end = s.end
		}
		timed = true
	}
	if timed {
		return start, end, true
	}
	for _, s := range g.snaps {
		if s.end.After(end) {
			end = s.end
		}
	}
	return end, end, false
}

// agg rebuilds, from the parts' summaries, what the stage's summary
// needs beyond its cells, so that stageAgg.summary renders the merged
// stage exactly as it renders a live one. The load adds up (each part ran
// its share of the VUs and of the arrival rate); the stage is complete
// only when every part's is.
func (g *group) agg() *stageAgg {
	s := newStageAgg(stageKey{g.id.scenario, g.id.stage})
	s.index, s.started, s.ended = g.id.index, true, true
	var planned, late float64
	for _, p := range g.sums {
		s.vus += p.VUs
		s.rate += p.TargetRate
		planned, late = max(planned, p.PlannedS), max(late, p.LateS)
		s.cut = s.cut || !p.Complete
		s.dirty += p.DirtyRequests
		s.tail.absorb(p)
		addCounts(s.errors, p.Errors)
		addCounts(s.sources, p.TokensSource)
		addCounts(s.inSources, p.InputTokensSource)
		s.tokens.absorb(p.TokenCheck)
		s.prefix.absorb(p)
		s.robust.absorb(p.Robustness)
		s.tasks.absorb(p.Tasks)
	}
	s.planned, s.late = seconds(planned), seconds(late)
	return s
}

// absorb adds a stage summary's tail counts.
func (t *tailCounts) absorb(s *StageSummary) {
	t.requests += s.TailRequests
	t.failed += s.TailFailed
	t.good += s.TailGoodRequests
	t.iterations += s.TailIterations
	t.outTok += s.TailOutputTokens
	t.inTok += s.TailInputTokens
}

// absorb adds a stage summary's token check; the sum of the relative
// differences comes back from their mean.
func (t *tokenCheck) absorb(c TokenCheck) {
	t.compared += c.Compared
	t.mismatched += c.Mismatched
	t.relSum += c.MeanRelDiff * float64(c.Compared)
}

// absorb adds a stage summary's robustness table.
func (r robustness) absorb(rs map[string]RobustnessSummary) {
	for name, s := range rs {
		t := r[name]
		if t == nil {
			t = &dirtyTally{statuses: map[int]int64{}, errors: map[string]int64{}}
			r[name] = t
		}
		addCounts(t.statuses, s.Statuses)
		addCounts(t.errors, s.Errors)
		t.verdicts[vHandled] += s.Handled
		t.verdicts[vDefect] += s.Defects
		t.verdicts[vAccepted] += s.Accepted
		t.verdicts[vCanceled] += s.Canceled
	}
}

func addCounts[K comparable](into, from map[K]int64) {
	for k, n := range from {
		into[k] += n
	}
}
