package merge

import "github.com/llmload/llmload/engine/result"

// serverSpans adds up the segments' accounts of the server's spans; nil
// when no segment received any. The merged account names each segment's
// receiver.
func serverSpans(in []Input) *result.ServerSpans {
	var out *result.ServerSpans
	for _, x := range in {
		s := x.Result.ServerSpans
		if s == nil {
			continue
		}
		if out == nil {
			out = &result.ServerSpans{Listen: s.Listen}
		} else {
			out.Listen += ", " + s.Listen
		}
		out.Spans += s.Spans
		out.Joined += s.Joined
		out.ByRequestID += s.ByRequestID
		out.Unjoined += s.Unjoined
		out.Evicted += s.Evicted
		out.Duplicates += s.Duplicates
		out.Malformed += s.Malformed
		out.Other += s.Other
		out.Rejected += s.Rejected
		out.Preflight += s.Preflight
		out.Requests += s.Requests
		out.NoSpan += s.NoSpan
	}
	return out
}

// negativeResiduals keeps the first of the segments' requests whose
// residual was below zero, up to result.MaxNegativeExamples.
func negativeResiduals(in []Input) []result.NegativeResidual {
	var out []result.NegativeResidual
	for _, x := range in {
		for _, n := range x.Result.NegativeResiduals {
			if len(out) == result.MaxNegativeExamples {
				return out
			}
			out = append(out, n)
		}
	}
	return out
}
