package servermetrics

import (
	"maps"
	"math"
	"slices"
	"strconv"
)

// specPerPos is vLLM's counter of the draft tokens accepted at each draft
// position (its "position" label, 0 to num_speculative_tokens − 1).
const specPerPos = "vllm:spec_decode_num_accepted_tokens_per_pos_total"

// RoleSpecAcceptedAt is the role of the draft tokens accepted at draft
// position pos, per scrape interval: its increase over the drafts' is
// vLLM's per-position acceptance rate.
func RoleSpecAcceptedAt(pos int) Role { return Role("spec_accepted_pos_" + strconv.Itoa(pos)) }

// posTracks follow specPerPos by position, summed over its other labels
// (engines). Not safe for concurrent use: the builder's owner owns it.
type posTracks struct {
	series []Series
	at     map[int]int     // position → index in series
	prev   map[int]float64 // the previous scrape's sum
}

func newPosTracks() *posTracks { return &posTracks{at: map[int]int{}, prev: map[int]float64{}} }

// add records one scrape's per-position counters.
func (p *posTracks) add(t float64, round int, fams families, known map[string]bool) {
	mf := lookup(fams, specPerPos)
	if mf == nil {
		return
	}
	known[specPerPos] = true
	sums := map[int]float64{}
	for _, m := range mf.GetMetric() {
		pos := -1
		for _, l := range m.GetLabel() {
			if l.GetName() == "position" {
				if n, err := strconv.Atoi(l.GetValue()); err == nil && n >= 0 {
					pos = n
				}
			}
		}
		if v, ok := scalar(m); ok && pos >= 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			sums[pos] += v
		}
	}
	for _, pos := range slices.Sorted(maps.Keys(sums)) {
		p.record(pos, t, round, sums[pos], mf.GetHelp())
	}
}

// record adds one position's increase since the previous scrape; a
// counter that went down was reset, and its value is the increase since.
func (p *posTracks) record(pos int, t float64, round int, v float64, help string) {
	prev, had := p.prev[pos]
	p.prev[pos] = v
	if !had {
		return
	}
	inc := v - prev
	if inc < 0 {
		inc = v
	}
	i, ok := p.at[pos]
	if !ok {
		i = len(p.series)
		p.at[pos] = i
		p.series = append(p.series, Series{Name: specPerPos + `:increase{position="` + strconv.Itoa(pos) + `"}`,
			Role: RoleSpecAcceptedAt(pos), Unit: UnitCount, Help: help + " (increase over each scrape interval)"})
	}
	s := &p.series[i]
	s.T = append(s.T, math.Round(t*1000)/1000)
	s.V = append(s.V, inc)
	s.rounds = append(s.rounds, round)
}
