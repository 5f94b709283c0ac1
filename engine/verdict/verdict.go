// Package verdict decides whether a finished run measured anything a CI
// may trust, from its result and the outages the run saw. It returns a
// one-line reason; the caller maps a non-empty one to exit code 1, which
// wins over a failed threshold or baseline gate (99): a gate evaluated on
// nothing, or on a target that was down, has no meaning.
package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/backoff"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// What a run does when the target stops answering for a while
// (options.target.on_unreachable).
const (
	OnUnreachableFail = "fail" // the default: exit 1
	OnUnreachableWarn = "warn" // a WARNING only
)

// Prefixes of the reasons Judge returns.
const (
	NothingMeasured   = "nothing measured"
	TargetUnreachable = "target unreachable"
)

// Input is what Judge needs besides the result.
type Input struct {
	Outages []backoff.Outage
	// Start and End bound the run, for "n s into the run".
	Start, End time.Time
	// OnUnreachable is OnUnreachableFail ("" means it) or OnUnreachableWarn.
	OnUnreachable string
}

// Judge appends a WARNING per outage to res.Warnings and returns why the
// run failed although it ran — nothing measured, or the target stopped
// answering — or "" when it measured. The reason is also kept in
// res.Run.Verdict and, when the run measured nothing, in res.Warnings, so
// a result file read later says it too. Nothing measured wins over an
// outage: it is the plainer statement.
func Judge(res *result.Result, in Input) string {
	res.Run.Outages = in.Outages
	for _, o := range in.Outages {
		res.Warnings = append(res.Warnings, outageWarning(&o, in))
	}
	reason := Unmeasured(res)
	if reason != "" {
		res.Warnings = append(res.Warnings, reason)
	} else if len(in.Outages) > 0 && in.OnUnreachable != OnUnreachableWarn {
		reason = unreachableReason(in)
	}
	res.Run.Verdict = reason
	return reason
}

// totals are a run's counts over all its stages.
type totals struct {
	iterations, iterErrors int64
	requests, ok           int64
	dirty, dirtyAnswered   int64
	errors                 map[string]int64
}

func sum(res *result.Result) totals {
	t := totals{errors: map[string]int64{}}
	for _, s := range res.Stages {
		t.iterations += s.Iterations
		t.iterErrors += s.IterationErrors
		t.requests += s.Requests
		t.ok += s.OK
		t.dirty += s.DirtyRequests
		for c, n := range s.Errors {
			t.errors[c] += n
		}
		for _, rs := range s.Robustness {
			for status, n := range rs.Statuses {
				if status != 0 {
					t.dirtyAnswered += n
				}
			}
		}
	}
	return t
}

// Unmeasured returns "nothing measured: why" when res holds no measurement
// worth a verdict, else "". Nothing is measured when no request was sent
// outside warmup, when every iteration raised a script error, or when no
// request succeeded. A dirty request counts as measured when the server
// answered it at all (handled, accepted, or an answered defect, which the
// robustness table judges): a robustness-only scenario is a measurement.
func Unmeasured(res *result.Result) string {
	t := sum(res)
	sent := t.requests + t.dirty
	switch {
	case sent == 0 && t.iterErrors > 0:
		return NothingMeasured + ": " + scriptErrors(res, t, "no request was sent")
	case sent == 0:
		return NothingMeasured + ": " + noRequest(res, t)
	case t.iterations > 0 && t.iterErrors >= t.iterations:
		return NothingMeasured + ": " + scriptErrors(res, t, "")
	case t.ok+t.dirtyAnswered == 0:
		return fmt.Sprintf("%s: no request succeeded: all %s %s failed (%s)", NothingMeasured,
			count(sent), plural(sent, "request", "requests"), classes(t.errors, t.dirty))
	}
	return ""
}

// scriptErrors says how many iterations failed and how, naming the most
// frequent error with its file:line.
func scriptErrors(res *result.Result, t totals, also string) string {
	var b strings.Builder
	if t.iterErrors >= t.iterations {
		fmt.Fprintf(&b, "all %s %s failed with a script error", count(t.iterErrors), plural(t.iterErrors, "iteration", "iterations"))
	} else {
		fmt.Fprintf(&b, "%s of %s iterations failed with a script error", count(t.iterErrors), count(t.iterations))
	}
	if also != "" {
		b.WriteString(" and " + also)
	}
	if len(res.ScriptErrors) > 0 {
		fmt.Fprintf(&b, "; %s", firstScriptError(res.ScriptErrors))
	}
	return b.String()
}

// firstScriptError names the error raised first, with how many distinct
// messages there were; files from before First was kept name the most
// frequent instead (with one message, both are the same).
func firstScriptError(errs []metrics.ScriptError) string {
	i := slices.IndexFunc(errs, func(e metrics.ScriptError) bool { return e.First })
	label := "first"
	if i < 0 && len(errs) > 1 {
		label = "most frequent"
	}
	i = max(i, 0)
	if len(errs) > 1 {
		label += " of " + strconv.Itoa(len(errs)) + " distinct"
	}
	return label + ": " + errs[i].Message
}

// noRequest explains a run that sent nothing and raised nothing.
func noRequest(res *result.Result, t totals) string {
	msg := "no request was sent: no iteration ran"
	if t.iterations > 0 {
		msg = fmt.Sprintf("no request was sent: %s %s ran and none called llm.chat or llm.complete",
			count(t.iterations), plural(t.iterations, "iteration", "iterations"))
	}
	if w := res.Warmup.Requests; w > 0 {
		msg += fmt.Sprintf(" (%s warmup %s are not measured)", count(w), plural(w, "request", "requests"))
	}
	return msg
}

// classes lists error classes by count, descending, e.g. "conn_refused×12".
func classes(errs map[string]int64, dirty int64) string {
	names := slices.SortedFunc(maps.Keys(errs), func(a, b string) int {
		if errs[a] != errs[b] {
			if errs[a] > errs[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names)+1)
	for _, n := range names {
		parts = append(parts, n+"×"+count(errs[n]))
	}
	if dirty > 0 {
		parts = append(parts, count(dirty)+" dirty without an answer")
	}
	return strings.Join(parts, ", ")
}

func unreachableReason(in Input) string {
	o := &in.Outages[0]
	what := fmt.Sprintf("it stopped answering %s into the run", since(in.Start, o.Start))
	if len(in.Outages) > 1 {
		what = fmt.Sprintf("it stopped answering %d times, first %s into the run", len(in.Outages), since(in.Start, o.Start))
	}
	back := "and came back"
	if !in.Outages[len(in.Outages)-1].Recovered() {
		back = "and did not come back"
	}
	var attempts int64
	for _, o := range in.Outages {
		attempts += o.Attempts
	}
	return fmt.Sprintf("%s: %s %s (%s %s failed without a response); the results cover an outage, "+
		"not the service (options.target.on_unreachable = \"warn\" accepts that)",
		TargetUnreachable, what, back, count(attempts), plural(attempts, "attempt", "attempts"))
}

// outageWarning says when the target stopped answering, how often llmload
// tried, and whether and when it came back.
func outageWarning(o *backoff.Outage, in Input) string {
	back := fmt.Sprintf("it did not answer again before the run ended (%s later)", seconds(o.Duration(in.End)))
	if o.Recovered() {
		back = fmt.Sprintf("it answered again after %s, %s into the run (%s)",
			seconds(o.Duration(in.End)), since(in.Start, o.End), wall(o.End))
	}
	stall := ""
	if o.Classes[engine.ErrTimeoutTTFT] > 0 {
		stall = " (timeout_ttft: not even the response headers came within ttft_timeout — a link that stopped " +
			"passing data, or a server that holds its headers until its first token and was slower than that)"
	}
	return fmt.Sprintf("target unreachable from %s into the run (%s): %s %s failed without a response (%s)%s, "+
		"VUs backing off up to %v between attempts; %s", since(in.Start, o.Start), wall(o.Start),
		count(o.Attempts), plural(o.Attempts, "attempt", "attempts"), classes(o.Classes, 0), stall, backoff.DefaultMax, back)
}

func since(start, t time.Time) string { return seconds(t.Sub(start)) }

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s" }

func wall(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// count writes n with thousands separators: counts in reasons are read,
// not parsed.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
