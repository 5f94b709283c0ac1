package metrics

import (
	"cmp"
	"math"
	"time"

	"github.com/llmload/llmload/engine"
)

// stageAgg accumulates one (scenario, stage). Owned by the aggregator.
type stageAgg struct {
	key             stageKey
	index, vus      int
	rate            float64 // target iterations per second, open model
	start, end      time.Time
	started, ended  bool
	cut             bool          // ended before its planned end
	planned         time.Duration // the window's planned length, 0 when not time-bound
	late            time.Duration // the larger lateness of its start and end marks
	tail            tailCounts
	startSeq        int
	firstAt, lastAt time.Time // earliest start seen, latest completion
	sources, errors map[string]int64
	inSources       map[string]int64 // successes per input token source
	dirty           int64
	robust          robustness
	tokens          tokenCheck
	chunks          chunkDist
	prefix          prefixCounts
	tags            tagBreakdown
	apis            tagBreakdown // by apiKey: the endpoints' requests
	targets         targetBreakdown
	tasks           taskBreakdown

	cells  [numBuiltin]cell
	checks map[string]*cell // by check name
	custom map[string]*cell // by custom metric name
}

func newStageAgg(k stageKey) *stageAgg {
	s := &stageAgg{
		key: k, sources: map[string]int64{}, errors: map[string]int64{}, inSources: map[string]int64{},
		checks: map[string]*cell{}, custom: map[string]*cell{}, robust: robustness{},
	}
	for id, d := range builtins {
		s.cells[id] = newCell(d.kind, metricID(id).geo())
	}
	return s
}

func (s *stageAgg) orderKey() int {
	if s.started {
		return s.startSeq
	}
	return math.MaxInt
}

// seen widens the span of activity that bounds a stage without marks.
func (s *stageAgg) seen(from, to time.Time) {
	if s.firstAt.IsZero() || from.Before(s.firstAt) {
		s.firstAt = from
	}
	if to.After(s.lastAt) {
		s.lastAt = to
	}
}

// tailCounts are the stage's requests and iterations that started after
// its window closed: in the graceful stop, or (multi-request iterations)
// while a later stage ran.
type tailCounts struct {
	requests, failed, good, iterations int64
	outTok, inTok                      int64
}

// inTail reports whether something starting at t started after the
// window closed. A sample that reaches the aggregator before its stage's
// end mark counts in the window; it started within a few microseconds of
// that mark.
func (s *stageAgg) inTail(t time.Time) bool { return s.ended && t.After(s.end) }

// tailOf is inTail of e's intended start where it has one: an open-model
// iteration scheduled within the window belongs to it, even when a busy
// machine started it after the window's (planned) end.
func (s *stageAgg) tailOf(e *event) bool { return s.inTail(e.at.Add(-e.sched)) }

// sample adds one clean request. Failed requests count in requests,
// errors, their tag values and against goodput, nowhere else.
func (s *stageAgg) sample(e *event) {
	s.seen(e.at, e.done())
	if e.tail {
		s.tail.add(e)
	}
	if e.failed {
		s.errors[cmp.Or(e.class, "unknown")]++
	} else {
		s.sources[cmp.Or(e.source, "unknown")]++
		s.inSources[cmp.Or(e.inSource, "unknown")]++
		s.tokens.add(e)
		s.chunks.add(e)
		s.prefix.add(e)
	}
	s.tags.add(e)
	s.apis.addAPI(e)
	s.targets.add(e)
	for _, id := range sampleMetrics {
		feed(id, &s.cells[id], e)
	}
	if e.media != nil {
		for _, id := range mediaMetrics {
			feed(id, &s.cells[id], e)
		}
	}
	if e.parts != nil {
		for _, id := range partMetrics {
			feed(id, &s.cells[id], e)
		}
	}
}

// feed is feedSample (feedTask for a task) that also books, for a
// counter, what a request or task started in the graceful-stop tail
// added: it is counted, but left out of the counter's rate.
func feed(id metricID, c *cell, e *event) {
	before := c.sum
	if e.task != nil {
		feedTask(id, c, e)
	} else {
		feedSample(id, c, e)
	}
	if e.tail && c.kind == kindCounter {
		c.tail += c.sum - before
	}
}

func (t *tailCounts) add(e *event) {
	t.requests++
	switch {
	case e.failed:
		t.failed++
	default:
		t.outTok, t.inTok = t.outTok+int64(e.outTok), t.inTok+int64(e.inTok)
	}
	if e.judged && e.good {
		t.good++
	}
}

// dirtySample counts a deliberately malformed request. It widens the
// window, as the load it put on the server was real, but enters no clean
// statistic: only the robustness table and the dirty.* counters.
func (s *stageAgg) dirtySample(e *event) {
	s.seen(e.at, e.done())
	s.dirty++
	s.robust.add(e)
	feedDirty(&s.cells, e.verdict)
}

// feedSample adds a request to the cell of built-in metric id: every
// request to the counts and shares, a successful one also to the
// measurements.
func feedSample(id metricID, c *cell, e *event) {
	switch id {
	case mRequests:
		c.add(1)
	case mErrors:
		c.add(b2f(e.failed))
	case mGoodput, mGoodShare:
		if e.judged {
			c.add(b2f(e.good))
		}
	default:
		if !e.failed {
			feedMeasure(id, c, e)
		}
	}
}

// feedMeasure adds a successful request's measurement. A zero duration
// means "not measured" (see engine.Result) and is skipped, except in ITL
// where a zero gap is real: two events read at once. A request that was
// not streamed has only E2E (and TTFB), its other latencies being 0.
func feedMeasure(id metricID, c *cell, e *event) {
	switch id {
	case mTTFT:
		c.addSet(e.ttft)
	case mTTFC:
		c.addSet(e.ttfc)
	case mTPOT:
		c.addSet(e.tpot)
	case mE2E:
		c.addSet(e.e2e)
	case mTTFB:
		c.addSet(e.ttfb)
	case mConnect:
		c.addSet(e.connect)
	case mTLS:
		c.addSet(e.tls)
	case mUpload:
		c.addSet(e.upload)
	case mITL:
		feedGaps(c, e.itl)
	case mITLToken:
		feedGaps(c, e.tokenITL)
	case mTTFTSched:
		feedSched(c, e, e.ttft)
	case mE2ESched:
		feedSched(c, e, e.e2e)
	case mOutTok:
		c.add(float64(e.outTok))
	case mInTok:
		c.add(float64(e.inTok))
	case mReasoningTok:
		c.add(float64(e.reasoning))
	case mInputs:
		c.add(float64(e.inputs))
	case mToolCalls:
		c.add(float64(e.toolCalls))
	default:
		switch {
		case isMediaMetric(id):
			feedMedia(id, c, e) // a view's: the stage feeds them only for media
		case isPartMetric(id):
			feedParts(id, c, e)
		}
	}
}

func feedGaps(c *cell, gaps []time.Duration) {
	for _, g := range gaps {
		c.addDuration(g)
	}
}

// feedSched records d measured from the intended start rather than t0, so
// time spent waiting for a free VU is not hidden (coordinated omission).
func feedSched(c *cell, e *event, d time.Duration) {
	if e.hasSched && d != 0 {
		c.addDuration(d + e.sched)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (s *stageAgg) iteration(e *event) {
	s.seen(e.at, e.at)
	s.cells[mIterations].add(1)
	if s.tailOf(e) {
		s.tail.iterations++
		s.cells[mIterations].tail++
	}
	if e.hasSched {
		s.cells[mScheduleLag].addDuration(e.sched)
	}
}

func (s *stageAgg) drop(e *event) {
	if !e.at.IsZero() {
		s.seen(e.at, e.at)
	}
	s.cells[mDropped].add(1)
	switch e.source {
	case engine.DropMaxVUs:
		s.cells[mDroppedMaxVUs].add(1)
	case engine.DropGrowing:
		s.cells[mDroppedGrowing].add(1)
	}
}

// check counts one evaluation of a named check.
func (s *stageAgg) check(name string, v float64) {
	c := s.checks[name]
	if c == nil {
		c = &cell{kind: kindRate}
		s.checks[name] = c
	}
	c.add(v)
	s.cells[mChecks].add(v)
}

// metric adds one value of a custom metric whose kind is already settled.
func (s *stageAgg) metric(name string, k kind, v float64) {
	c := s.custom[name]
	if c == nil {
		nc := newCell(k, valueGeo)
		c = &nc
		s.custom[name] = c
	}
	c.add(v)
}

// window returns the stage's bounds. A stage that never started begins at
// its first sample; one that never ended ends now during the run, and at
// close at its last completion (an interrupted run), or at close when
// nothing completed after its start. ok is false for a stage named only by
// events without a time (script errors, metric samples): its window is
// empty.
func (s *stageAgg) window(now time.Time, final bool) (start, end time.Time, ok bool) {
	start = s.start
	if !s.started {
		start = s.firstAt
	}
	end = s.end
	if !s.ended {
		end = now
		if final && s.lastAt.After(start) {
			end = s.lastAt
		}
	}
	if start.IsZero() {
		return end, end, false
	}
	return start, end, true
}

// snap copies what queries need. share: see recorder.freeze.
func (s *stageAgg) snap(now time.Time, final bool) stageSnap {
	ss := stageSnap{
		scenario: s.key.scenario, stage: s.key.stage, index: s.index,
		checks: make(map[string]cellSnap, len(s.checks)),
		custom: make(map[string]cellSnap, len(s.custom)),
		dirty:  s.robust.counts(),
	}
	ss.start, ss.end, ss.timed = s.window(now, final)
	for id := range s.cells {
		ss.cells[id] = s.cells[id].snap(final)
	}
	for name, c := range s.checks {
		ss.checks[name] = c.snap(final)
	}
	for name, c := range s.custom {
		ss.custom[name] = c.snap(final)
	}
	return ss
}

// summary renders the stage from its final snapshot.
func (s *stageAgg) summary(ss *stageSnap) StageSummary {
	secs := ss.seconds()
	c := &ss.cells
	requests, failed := c[mRequests].n, c[mErrors].hits
	iters, dropped := c[mIterations].n, c[mDropped].n
	t := &s.tail
	st := StageSummary{
		Scenario: s.key.scenario, Stage: s.key.stage, Index: s.index, VUs: s.vus,
		Start: ss.start, End: ss.end, DurationS: secs, Complete: s.started && s.ended && !s.cut,
		PlannedS: s.planned.Seconds(), LateS: s.late.Seconds(),
		Requests: requests, OK: requests - failed, Failed: failed,
		IterationErrors: c[mIterErrors].n,
		DirtyRequests:   s.dirty,
		Robustness:      s.robust.summary(),
		ReqPerSec:       perSecond(float64(requests-t.requests), secs),
		Errors:          s.errors,
		Iterations:      iters, DroppedIterations: dropped,
		DroppedMaxVUs: c[mDroppedMaxVUs].n, DroppedGrowing: c[mDroppedGrowing].n,
		TargetRate:    s.rate,
		AchievedRate:  perSecond(float64(iters-t.iterations), secs),
		ScheduledRate: perSecond(float64(iters-t.iterations+dropped), secs),
		TailRequests:  t.requests, TailOK: t.requests - t.failed, TailFailed: t.failed,
		TailIterations: t.iterations, TailOutputTokens: t.outTok, TailInputTokens: t.inTok,
		TailGoodRequests: t.good,
		Checks:           checkList(ss.checks),
		Metrics:          metricSummaries(ss.custom, secs),
	}
	st.ByTag, st.TagKeysOverflow = s.tags.summary(), s.tags.overflow
	st.ByAPI = s.apis.byAPI()
	st.ByTarget = s.targets.summary()
	s.tokenFigures(&st, ss)
	latencies(&st, ss)
	goodput(&st, ss)
	mediaFigures(&st, ss)
	partsFigures(&st, ss)
	taskFigures(&st, ss, &s.tasks)
	return st
}

// tokenFigures fills the token counts, rates and sources.
func (s *stageAgg) tokenFigures(st *StageSummary, ss *stageSnap) {
	c, secs := &ss.cells, ss.seconds()
	st.OutputTokens, st.InputTokens = int64(c[mOutTok].sum), int64(c[mInTok].sum)
	st.ReasoningTokens = int64(c[mReasoningTok].sum)
	st.OutputTokPerSec = perSecond(float64(st.OutputTokens-s.tail.outTok), secs)
	st.InputTokPerSec = perSecond(float64(st.InputTokens-s.tail.inTok), secs)
	st.TokensSource, st.InputTokensSource = s.sources, s.inSources
	st.TokenCheck = s.tokens.summary()
	st.Chunks = s.chunks.summary()
	in := &c[mInputs]
	st.Inputs, st.InputsPerSec = int64(in.sum), perSecond(in.sum-in.tail, secs)
	st.ToolCalls = int64(c[mToolCalls].sum)
	st.UsageInputTokens, st.CachedTokens, st.CachedRequests = s.prefix.usageIn, s.prefix.cached, s.prefix.hits
	st.PrefixTarget = s.prefix.target.summary()
}

// latencies fills the distributions; TTFT and E2E carry histograms.
func latencies(st *StageSummary, ss *stageSnap) {
	c := &ss.cells
	st.TTFB, st.TTFT, st.TTFC = c[mTTFB].t.dist(), c[mTTFT].t.distWithHistogram(), c[mTTFC].t.dist()
	st.Connect, st.TLS, st.Upload = c[mConnect].t.dist(), c[mTLS].t.dist(), c[mUpload].t.dist()
	st.TPOT, st.ITL, st.ITLToken = c[mTPOT].t.dist(), c[mITL].t.dist(), c[mITLToken].t.dist()
	st.E2E = c[mE2E].t.distWithHistogram()
	st.ScheduleLag, st.TTFTSched, st.E2ESched = c[mScheduleLag].t.dist(), c[mTTFTSched].t.dist(), c[mE2ESched].t.dist()
}

// goodput fills the figures of requests that met the SLO; all zero
// without one.
func goodput(st *StageSummary, ss *stageSnap) {
	good, share := &ss.cells[mGoodput], &ss.cells[mGoodShare]
	st.GoodRequests = int64(good.sum)
	st.Goodput = perSecond(good.sum-float64(st.TailGoodRequests), ss.seconds())
	st.GoodShare = ratio(share.hits, share.n)
}
