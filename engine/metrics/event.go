package metrics

import (
	"cmp"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

type eventKind uint8

const (
	evSample eventKind = iota
	evDirty            // a deliberately malformed request: counted, never measured
	evIterErr
	evStageStart
	evStageEnd
	evIterStart
	evDrop
	evMetric
	evRequest // a Track, Declare or Snapshot call waiting for its answer
	evParts   // a sample's breakdown, known after the sample (its span came later)
	evTask    // a finished task (engine.TaskSample)
)

// event is what travels to the aggregator: only the fields it needs, so the
// large buffer stays small and a sample's text is not kept alive. Some
// fields serve several kinds; each says which.
type event struct {
	kind     eventKind
	failed   bool
	hasSched bool // sched is set: the sample or iteration had an intended start
	cut      bool // a stage-end mark: the stage ended before its planned end
	tail     bool // set by the aggregator: the sample started in its stage's graceful-stop tail
	judged   bool // the collector has an SLO, and good says whether the sample met it
	good     bool
	scenario string
	stage    string
	at       time.Time // sample or iteration start, the mark's time, a drop's schedule
	ttfb     time.Duration
	connect  time.Duration // issue to t0 (engine.Result.Connect)
	tls      time.Duration // the TLS handshake's part of connect (engine.Result.TLS)
	upload   time.Duration // t0 to the body's upload, where it is a figure (see uploadOf)
	ttft     time.Duration
	ttfc     time.Duration
	tpot     time.Duration
	e2e      time.Duration
	sched    time.Duration // start − intended start, never negative
	// early is how long before its intended start an iteration started
	// (sched is then 0), so that the series finds the intended second.
	early    time.Duration
	planned  time.Duration // a stage mark's planned window
	late     time.Duration // a stage mark's lateness (engine.StageMark.Late)
	itl      []time.Duration
	tokenITL []time.Duration
	inTok    int
	outTok   int
	// textEvents are the sample's text-carrying events (engine.Result.TextEvents).
	textEvents int
	cached     int                // prompt tokens served from the server's prefix cache
	asked      engine.PrefixAsked // what the prompt asked of that cache
	// clientTok is the client tokenizer's count of the output, reasoning
	// the reasoning tokens among outTok.
	clientTok, reasoning int
	inputs, toolCalls    int               // inputs embedded (embeddings), tool calls made
	api                  string            // the sample's endpoint (engine.Result.API)
	targetName           string            // the options.targets endpoint that served it (engine.Result.Target)
	source               string            // source of outTok; a drop's reason
	inSource             string            // source of inTok
	class                string            // error class of a failed sample; a metric sample's kind
	name                 string            // script error message; a metric sample's name
	value                float64           // a metric sample's value; a stage mark's target rate
	tags                 map[string]string // a sample's or metric sample's tags, read only
	index, target        int
	status               int               // a dirty sample's HTTP status, 0 for no response
	verdict              verdict           // a dirty sample's verdict
	media                *mediaEvent       // a successful media sample's figures; nil otherwise
	parts                *engine.Breakdown // a successful sample's split of its TTFT; nil without one
	task                 *taskEvent        // a task event's figures; nil for every other kind
	req                  *request
}

type requestOp uint8

const (
	reqTrack requestOp = iota
	reqDeclare
	reqSnapshot
)

// request is a call answered by the aggregator goroutine, because only it
// may read or change the aggregates. Snapshot replies on snapshot, the
// others on err.
type request struct {
	op       requestOp
	metric   string
	filter   Filter
	defs     []plan.MetricDef
	err      chan error
	snapshot chan *Snapshot
}

func sampleEvent(s *engine.Sample) event {
	e := event{
		kind: evSample, scenario: s.Scenario, stage: s.Stage, at: s.Start,
		ttfb: s.TTFB, connect: s.Connect, tls: s.TLS, ttft: s.TTFT, ttfc: s.TTFC, tpot: s.TPOT, e2e: s.E2E,
		itl: s.ITL, tokenITL: s.TokenITL,
		inTok: s.InputTokens, outTok: s.OutputTokens, cached: s.CachedTokens, clientTok: s.ClientOutputTokens,
		reasoning: s.ReasoningTokens, source: s.TokensSource, inSource: s.InputTokensSource,
		inputs: s.Inputs, toolCalls: len(s.ToolCalls), api: s.API, targetName: s.Target, textEvents: s.TextEvents,
		tags: s.Tags, media: mediaOf(&s.Result), parts: breakdownOf(&s.Result), asked: s.PrefixAsked,
		upload: uploadOf(&s.Result),
	}
	e.sched, e.hasSched = lag(s.Scheduled, s.Start)
	if s.Err != nil {
		e.failed = true
		e.class = s.Err.Class
	}
	return e
}

// uploadOf is r's upload where the stage's upload figure takes it: a
// request that sent media or a body of engine.LargeBody bytes or more (a
// smaller body's upload is its write, microseconds); 0 otherwise.
func uploadOf(r *engine.Result) time.Duration {
	if r.BodyBytes >= engine.LargeBody || sentMedia(r) {
		return r.Upload
	}
	return 0
}

// dirtyEvent keeps what places a dirty sample in its stage's window and
// what the robustness table counts: kind (in name), status, error class
// and verdict, judged here on the producer's goroutine.
func dirtyEvent(s *engine.Sample) event {
	e := event{
		kind: evDirty, scenario: s.Scenario, stage: s.Stage, at: s.Start,
		ttfb: s.TTFB, ttft: s.TTFT, e2e: s.E2E,
		name: s.Dirty, status: s.Status, verdict: verdictOf(&s.Result),
	}
	if s.Err != nil {
		e.class = cmp.Or(s.Err.Class, "unknown")
	}
	return e
}

func iterationEvent(m *engine.IterationMark) event {
	e := event{kind: evIterStart, scenario: m.Scenario, stage: m.Stage, at: m.Started}
	e.sched, e.hasSched = lag(m.Scheduled, m.Started)
	if e.hasSched && m.Started.Before(m.Scheduled) {
		e.early = m.Scheduled.Sub(m.Started)
	}
	return e
}

// scheduled is an iteration's intended start; zero without one.
func (e *event) scheduled() time.Time {
	if !e.hasSched {
		return time.Time{}
	}
	return e.at.Add(e.early - e.sched)
}

func metricEvent(m *engine.MetricSample) event {
	return event{
		kind: evMetric, scenario: m.Scenario, stage: m.Stage,
		name: m.Name, class: m.Kind, value: m.Value, tags: m.Tags,
	}
}

func markEvent(k eventKind, m engine.StageMark) event {
	return event{
		kind: k, scenario: m.Scenario, stage: m.Stage, at: m.At,
		index: m.Index, target: m.Target, value: m.Rate, cut: m.Cut, planned: m.Planned, late: m.Late,
	}
}

// lag is how late a start was against its schedule; a start a hair early
// counts as on time.
func lag(scheduled, started time.Time) (time.Duration, bool) {
	if scheduled.IsZero() {
		return 0, false
	}
	return max(started.Sub(scheduled), 0), true
}

// done is when the sample's request finished, as far as it was measured.
func (e *event) done() time.Time {
	return e.at.Add(max(e.e2e, e.ttft, e.ttfb))
}
