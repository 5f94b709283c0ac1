package run

import (
	"cmp"

	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/selfcheck"
)

// judgeProbes hands the capacity searches their judge, now that the
// self-check it reads is running; nothing without a capacity search.
func judgeProbes(eng *executor.Engine, j *capacity.WindowJudge, mon *selfcheck.Monitor) {
	if j == nil {
		return
	}
	j.SetClient(mon)
	eng.SetProbeJudge(j)
}

// capacityOutcomes are what the searches found once the engine returned.
// After a second interrupt it may still be running: a search it has not
// stopped is stopped here, so that no gate passes on half a search.
func capacityOutcomes(eng *executor.Engine, e *ending) []capacity.Outcome {
	out := eng.Capacity()
	if e.aborted {
		for i := range out {
			out[i].Stopped = cmp.Or(out[i].Stopped, ErrAborted.Error())
		}
	}
	return out
}
