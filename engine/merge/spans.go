package merge

import "github.com/llmload/llmload/engine/result"

// serverSpans adds up the segments' accounts of the server's spans; nil
// when no segment received any. The merged account names each segment's
// receiver and keeps the first negative residuals of all.
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
		for _, n := range s.Negative {
			if len(out.Negative) < result.MaxNegativeExamples {
				out.Negative = append(out.Negative, n)
			}
		}
	}
	return out
}
