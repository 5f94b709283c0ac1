package history

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// Pool joins several runs of one plan, newest first, into one baseline
// result: each stage (matched by scenario, stage and index) holds every
// run's requests as if one run had made them all over all their windows.
// Latency histograms merge exactly (metrics.MergeDists), so a percentile
// of the pool is the percentile of all the runs' values, and one noisy
// run moves it by its share only; counts add up, and rates are the
// summed counts over the summed windows. Each capacity search keeps the
// run whose capacity is the median of the runs'. The runs are not
// modified.
func Pool(rs []*result.Result) (*result.Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("history: no runs to pool")
	}
	out, err := clone(rs[0])
	if err != nil {
		return nil, err
	}
	if len(rs) == 1 {
		return out, nil
	}
	for i := range out.Stages {
		st := &out.Stages[i]
		for _, r := range rs[1:] {
			if o := findStage(r, st); o != nil {
				if err := absorb(st, o); err != nil {
					return nil, fmt.Errorf("history: pool stage %s/%s: %w", st.Scenario, st.Stage, err)
				}
			}
		}
		rates(st)
	}
	out.Capacity = medianCapacity(rs)
	out.Run.Start = rs[len(rs)-1].Run.Start
	return out, nil
}

func clone(r *result.Result) (*result.Result, error) {
	var b bytes.Buffer
	if err := result.WriteJSON(&b, r); err != nil {
		return nil, err
	}
	return result.ReadJSON(&b)
}

func findStage(r *result.Result, st *metrics.StageSummary) *metrics.StageSummary {
	for i := range r.Stages {
		o := &r.Stages[i]
		if o.Scenario == st.Scenario && o.Stage == st.Stage && o.Index == st.Index {
			return o
		}
	}
	return nil
}

// absorb adds o's requests to st.
func absorb(st, o *metrics.StageSummary) error {
	for _, p := range []struct {
		into *int64
		from int64
	}{
		{&st.Requests, o.Requests}, {&st.OK, o.OK}, {&st.Failed, o.Failed},
		{&st.IterationErrors, o.IterationErrors}, {&st.DirtyRequests, o.DirtyRequests},
		{&st.OutputTokens, o.OutputTokens}, {&st.InputTokens, o.InputTokens}, {&st.ReasoningTokens, o.ReasoningTokens},
		{&st.GoodRequests, o.GoodRequests}, {&st.Iterations, o.Iterations}, {&st.DroppedIterations, o.DroppedIterations},
		{&st.TailRequests, o.TailRequests}, {&st.TailOK, o.TailOK}, {&st.TailFailed, o.TailFailed},
		{&st.TailIterations, o.TailIterations}, {&st.TailOutputTokens, o.TailOutputTokens},
		{&st.TailInputTokens, o.TailInputTokens}, {&st.TailGoodRequests, o.TailGoodRequests},
	} {
		*p.into += p.from
	}
	st.DurationS += o.DurationS
	if st.Errors == nil && len(o.Errors) > 0 {
		st.Errors = map[string]int64{}
	}
	for k, v := range o.Errors {
		st.Errors[k] += v
	}
	for _, d := range []struct{ into, from *metrics.Dist }{
		{&st.TTFB, &o.TTFB}, {&st.Connect, &o.Connect}, {&st.TLS, &o.TLS}, {&st.TTFT, &o.TTFT},
		{&st.TTFC, &o.TTFC}, {&st.TPOT, &o.TPOT}, {&st.ITL, &o.ITL}, {&st.ITLToken, &o.ITLToken},
		{&st.E2E, &o.E2E}, {&st.ScheduleLag, &o.ScheduleLag}, {&st.TTFTSched, &o.TTFTSched}, {&st.E2ESched, &o.E2ESched},
	} {
		switch {
		case d.from.Count == 0:
		case d.into.Count == 0:
			*d.into = *d.from
		default:
			m, err := metrics.MergeDists(*d.into, *d.from)
			if err != nil {
				return err
			}
			*d.into = m
		}
	}
	return nil
}

// rates computes a pooled stage's rates again over its summed window.
func rates(st *metrics.StageSummary) {
	if st.DurationS <= 0 {
		return
	}
	st.ReqPerSec = float64(st.WindowRequests()) / st.DurationS
	st.OutputTokPerSec = float64(st.WindowOutputTokens()) / st.DurationS
	st.InputTokPerSec = float64(st.InputTokens-st.TailInputTokens) / st.DurationS
	st.Goodput = float64(st.WindowGoodRequests()) / st.DurationS
	if st.Requests > 0 {
		st.GoodShare = float64(st.GoodRequests) / float64(st.Requests)
	}
}

// medianCapacity keeps, for each capacity search, the entry of the run
// whose capacity is the median among the runs that have it.
func medianCapacity(rs []*result.Result) []result.Capacity {
	byKey := map[string][]result.Capacity{}
	var order []string
	for _, r := range rs {
		for _, c := range r.Capacity {
			k := c.Scenario + "\x00" + c.Load
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], c)
		}
	}
	out := make([]result.Capacity, 0, len(order))
	for _, k := range order {
		cs := slices.Clone(byKey[k])
		slices.SortStableFunc(cs, func(a, b result.Capacity) int { return cmp.Compare(a.Capacity, b.Capacity) })
		out = append(out, cs[(len(cs)-1)/2])
	}
	return out
}
