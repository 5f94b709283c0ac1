package traces

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
)

// Defaults of JoinOptions.
const (
	DefaultWait            = 10 * time.Second
	DefaultMaxPendingSpans = 100000
)

// JoinOptions configures a Joiner.
type JoinOptions struct {
	// Wait is how long a sample waits for its span; 0 means DefaultWait.
	Wait time.Duration
	// MaxPendingSpans caps the spans waiting for their request (the oldest
	// is evicted past it), and the joined traces remembered to catch
	// duplicates; 0 means DefaultMaxPendingSpans.
	MaxPendingSpans int
}

// JoinStats is the whole account of a run's spans and samples.
//
// Spans, the Receiver's part (filled by WithReceiver): Received = Spans
// + Other + Rejected; Malformed counts delivered spans with a bad
// attribute value (a subset of Spans).
// Spans, the Joiner's part: Spans (the request spans delivered to it) =
// Joined + Duplicates + Evicted + Unjoined + Pending; ByRequestID is the part of Joined matched by the
// server's request id rather than the trace id.
// Samples: Samples = Joined + NoSpan + Untraced + Held; Late counts
// samples that came after Flush and were dropped.
type JoinStats struct {
	Received    int64 `json:"spans_received"`       // spans in the exports decoded
	Other       int64 `json:"spans_other"`          // not request spans, not delivered
	Rejected    int64 `json:"spans_rejected"`       // bad trace or span id, not delivered
	Malformed   int64 `json:"spans_malformed"`      // delivered with a bad attribute value
	Spans       int64 `json:"spans"`                // request spans given to the Joiner
	Joined      int64 `json:"joined"`               // spans matched to their sample
	ByRequestID int64 `json:"joined_by_request_id"` // of Joined, matched by request id
	Duplicates  int64 `json:"duplicates"`           // a trace's span again, ignored
	Evicted     int64 `json:"evicted"`              // waited for their sample past the cap
	Unjoined    int64 `json:"unjoined"`             // still waiting at Flush, or after it
	Pending     int64 `json:"pending"`              // waiting for their sample now
	Samples     int64 `json:"samples"`              // samples given before Flush
	NoSpan      int64 `json:"no_span"`              // traced samples passed on without a span
	Untraced    int64 `json:"untraced"`             // samples without a trace id
	Held        int64 `json:"held"`                 // samples waiting for their span now
	Late        int64 `json:"late"`                 // samples given after Flush, dropped
}

// WithReceiver adds the receiver's part of the account.
func (s JoinStats) WithReceiver(r ReceiverStats) JoinStats {
	s.Received, s.Other, s.Rejected, s.Malformed = r.Spans, r.Other, r.Rejected, r.Malformed
	return s
}

// Joiner holds the client's samples until the server's span of each
// arrives, and keeps spans that arrive before their sample. Its methods
// are safe for concurrent use; next is called under the Joiner's lock,
// one call at a time and never after Flush returned, so next must not
// call the Joiner.
//
// Memory: held samples number at most the sample rate × Wait (each is
// released when its span comes or its Wait ends); pending spans and
// remembered joins at most MaxPendingSpans each.
type Joiner struct {
	opt  JoinOptions
	next func(engine.Sample)

	mu          sync.Mutex
	held        list.List // *heldSample, oldest (soonest to expire) first
	heldByTrace map[string]*list.Element
	heldByReq   map[string]*list.Element
	pending     list.List // *Span, oldest first
	pendByTrace map[string]*list.Element
	pendByReq   map[string]*list.Element
	joined      []string // ring of the last MaxPendingSpans joined trace ids
	joinedNext  int
	joinedTrace map[string]struct{}
	timer       *time.Timer
	armed       bool
	drained     chan struct{} // closed when the last held sample leaves
	flushed     bool
	stats       JoinStats
}

type heldSample struct {
	s       engine.Sample
	expires time.Time
}

// NewJoiner returns a Joiner passing samples on to next.
func NewJoiner(opt JoinOptions, next func(engine.Sample)) *Joiner {
	if opt.Wait <= 0 {
		opt.Wait = DefaultWait
	}
	if opt.MaxPendingSpans <= 0 {
		opt.MaxPendingSpans = DefaultMaxPendingSpans
	}
	return &Joiner{
		opt: opt, next: next,
		heldByTrace: map[string]*list.Element{}, heldByReq: map[string]*list.Element{},
		pendByTrace: map[string]*list.Element{}, pendByReq: map[string]*list.Element{},
		joinedTrace: map[string]struct{}{},
	}
}

// Sample takes one client sample: one without a trace id is passed on at
// once, one whose span already came is passed on joined, any other is held
// until its span comes or Wait ends.
func (j *Joiner) Sample(s engine.Sample) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.flushed {
		j.stats.Late++
		return
	}
	j.stats.Samples++
	if s.TraceID == "" {
		j.stats.Untraced++
		j.next(s)
		return
	}
	if e, ok := j.pendByTrace[s.TraceID]; ok {
		j.joinPending(s, e, false)
		return
	}
	if e, ok := j.pendByReq[s.RequestID]; ok && s.RequestID != "" {
		j.joinPending(s, e, true)
		return
	}
	if _, dup := j.heldByTrace[s.TraceID]; dup {
		// Two requests under one trace id cannot both be matched to its
		// span; the later one goes on without.
		j.stats.NoSpan++
		j.next(s)
		return
	}
	j.hold(s)
}

// Span takes one request span, as the Receiver delivers it.
func (j *Joiner) Span(sp Span) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.stats.Spans++
	if j.flushed {
		j.stats.Unjoined++
		return
	}
	if j.duplicate(sp) {
		j.stats.Duplicates++
		return
	}
	if e, ok := j.heldByTrace[sp.TraceID]; ok {
		j.joinHeld(sp, e, false)
		return
	}
	if e, ok := j.heldByReq[sp.Server.RequestID]; ok && sp.Server.RequestID != "" {
		j.joinHeld(sp, e, true)
		return
	}
	j.keep(sp)
}

// Flush ends the run: it waits until every held sample is joined or its
// Wait ended, or ctx ended, then passes on the rest without a span and
// counts the spans still waiting as Unjoined. Samples and spans given
// after it are counted (Late, Unjoined), never passed on.
func (j *Joiner) Flush(ctx context.Context) {
	j.mu.Lock()
	for j.held.Len() > 0 && !j.flushed {
		ch := j.drained
		j.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		j.mu.Lock()
		if ctx.Err() != nil {
			break
		}
	}
	defer j.mu.Unlock()
	if j.flushed {
		return
	}
	j.flushed = true
	if j.timer != nil {
		j.timer.Stop()
	}
	for j.held.Len() > 0 {
		j.release(j.held.Front())
	}
	j.stats.Unjoined += int64(j.pending.Len())
	j.pending.Init()
	clear(j.pendByTrace)
	clear(j.pendByReq)
}

// Stats is the Joiner's account so far; add the Receiver's with
// WithReceiver.
func (j *Joiner) Stats() JoinStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Pending = int64(j.pending.Len())
	s.Held = int64(j.held.Len())
	return s
}

// duplicate reports a span of a trace already joined or waiting: a span
// sent again (its span id is its trace's) or a second request span of one
// trace, which cannot both be the request's.
func (j *Joiner) duplicate(sp Span) bool {
	_, joined := j.joinedTrace[sp.TraceID]
	_, waiting := j.pendByTrace[sp.TraceID]
	return joined || waiting
}

func (j *Joiner) hold(s engine.Sample) {
	e := j.held.PushBack(&heldSample{s: s, expires: time.Now().Add(j.opt.Wait)})
	j.heldByTrace[s.TraceID] = e
	if _, taken := j.heldByReq[s.RequestID]; s.RequestID != "" && !taken {
		j.heldByReq[s.RequestID] = e
	}
	if j.drained == nil {
		j.drained = make(chan struct{})
	}
	if !j.armed {
		j.arm(j.opt.Wait)
	}
}

func (j *Joiner) arm(d time.Duration) {
	j.armed = true
	if j.timer == nil {
		j.timer = time.AfterFunc(d, j.expire)
		return
	}
	j.timer.Reset(d)
}

// expire releases the held samples whose Wait ended; it runs on the
// timer, so samples leave even when no span ever comes.
func (j *Joiner) expire() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.armed = false
	if j.flushed {
		return
	}
	now := time.Now()
	for e := j.held.Front(); e != nil; e = j.held.Front() {
		h := e.Value.(*heldSample)
		if h.expires.After(now) {
			j.arm(h.expires.Sub(now))
			return
		}
		j.release(e)
	}
}

// release passes a held sample on without a span.
func (j *Joiner) release(e *list.Element) {
	h := j.unhold(e)
	j.stats.NoSpan++
	j.next(h.s)
}

func (j *Joiner) unhold(e *list.Element) *heldSample {
	h := j.held.Remove(e).(*heldSample)
	delete(j.heldByTrace, h.s.TraceID)
	if j.heldByReq[h.s.RequestID] == e {
		delete(j.heldByReq, h.s.RequestID)
	}
	if j.held.Len() == 0 && j.drained != nil {
		close(j.drained)
		j.drained = nil
	}
	return h
}

func (j *Joiner) joinHeld(sp Span, e *list.Element, byRequestID bool) {
	h := j.unhold(e)
	j.deliverJoined(h.s, sp, byRequestID)
}

func (j *Joiner) joinPending(s engine.Sample, e *list.Element, byRequestID bool) {
	sp := j.unkeep(e)
	j.deliverJoined(s, sp, byRequestID)
}

func (j *Joiner) deliverJoined(s engine.Sample, sp Span, byRequestID bool) {
	j.stats.Joined++
	if byRequestID {
		j.stats.ByRequestID++
	}
	j.remember(sp)
	server := sp.Server
	s.Span = &server
	j.next(s)
}

// keep holds a span whose sample has not come yet, evicting the oldest
// past the cap.
func (j *Joiner) keep(sp Span) {
	e := j.pending.PushBack(&sp)
	j.pendByTrace[sp.TraceID] = e
	if _, taken := j.pendByReq[sp.Server.RequestID]; sp.Server.RequestID != "" && !taken {
		j.pendByReq[sp.Server.RequestID] = e
	}
	if j.pending.Len() > j.opt.MaxPendingSpans {
		j.unkeep(j.pending.Front())
		j.stats.Evicted++
	}
}

func (j *Joiner) unkeep(e *list.Element) Span {
	sp := j.pending.Remove(e).(*Span)
	delete(j.pendByTrace, sp.TraceID)
	if j.pendByReq[sp.Server.RequestID] == e {
		delete(j.pendByReq, sp.Server.RequestID)
	}
	return *sp
}

// remember records a join so that a second span of the trace is known
// for a duplicate; the ring keeps the memory bounded.
func (j *Joiner) remember(sp Span) {
	if len(j.joined) < j.opt.MaxPendingSpans {
		j.joined = append(j.joined, sp.TraceID)
	} else {
		delete(j.joinedTrace, j.joined[j.joinedNext])
		j.joined[j.joinedNext] = sp.TraceID
		j.joinedNext = (j.joinedNext + 1) % len(j.joined)
	}
	j.joinedTrace[sp.TraceID] = struct{}{}
}
