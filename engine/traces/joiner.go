package traces

import (
	"context"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
)

// Defaults of JoinOptions.
const (
	DefaultWait            = 10 * time.Second
	DefaultMaxPendingSpans = 100000
	DefaultRememberJoins   = 1 << 15
)

// JoinOptions configures a Joiner.
type JoinOptions struct {
	// Wait is how long a sample waits for its span; 0 means DefaultWait.
	Wait time.Duration
	// MaxPendingSpans caps the spans waiting for their request (the oldest
	// is evicted past it); 0 means DefaultMaxPendingSpans.
	MaxPendingSpans int
	// RememberJoins is how many of the last joined traces, at least, are
	// remembered to catch a duplicate span (an exporter's retry comes
	// within seconds; an older one waits as a pending span and ends
	// Unjoined or Evicted, counted either way); at most twice as many are.
	// 0 means DefaultRememberJoins.
	RememberJoins int
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
// remembered joins at most MaxPendingSpans and 2 × RememberJoins.
//
// One map by trace id holds a trace's held sample or its pending span,
// one by the server's request id the entries that carry one: they hold
// only what waits, so they stay small and in cache however long the run.
// The joined traces are two generations of RememberJoins each, the older
// dropped whole when the newer is full: a map that only grows and is
// then dropped never fills with the deleted slots that make a map of
// constant size but constant churn slow to search. The held
// samples and pending spans are lists threaded through the entries, and
// the entries are recycled: a join costs a handful of map operations on
// 16-byte keys and one allocation, the server span it hands on.
type Joiner struct {
	opt  JoinOptions
	next func(engine.Sample)

	mu        sync.Mutex
	held      chain[heldSample]  // oldest (soonest to expire) first
	pending   chain[pendingSpan] // oldest first
	byTrace   map[TraceID]slot
	byReq     map[string]slot
	joined    map[TraceID]struct{} // the newer generation of joined traces
	joinedOld map[TraceID]struct{} // the older, searched too
	freeHeld  freeList[heldSample]
	freePend  freeList[pendingSpan]
	timer     *time.Timer
	armed     bool
	drained   chan struct{} // closed when the last held sample leaves
	flushed   bool
	stats     JoinStats
}

// slot is what a trace id or a request id names: a held sample or a
// pending span.
type slot struct {
	held *heldSample
	pend *pendingSpan
}

type heldSample struct {
	s       engine.Sample
	key     TraceID
	expires time.Time
	// byReq says the sample is in byReq under its request id (the first
	// of a request id is); wasJoined that its trace was joined before and
	// is still remembered, so that a span of it is a duplicate.
	byReq, wasJoined bool
	prev, next       *heldSample
}

type pendingSpan struct {
	sp         Span
	byReq      bool // in byReq under its request id
	prev, next *pendingSpan
}

// link is the place of an entry in a chain.
type link[T any] interface {
	*T
	links() (prev, next **T)
}

func (h *heldSample) links() (prev, next **heldSample)   { return &h.prev, &h.next }
func (p *pendingSpan) links() (prev, next **pendingSpan) { return &p.prev, &p.next }

// chain is a doubly linked list threaded through its entries.
type chain[T any] struct {
	front, back *T
	n           int
}

func pushBack[T any, P link[T]](c *chain[T], e P) {
	prev, next := e.links()
	*prev, *next = c.back, nil
	if c.back != nil {
		_, bn := P(c.back).links()
		*bn = e
	} else {
		c.front = e
	}
	c.back = e
	c.n++
}

func remove[T any, P link[T]](c *chain[T], e P) {
	prev, next := e.links()
	if *prev != nil {
		_, pn := P(*prev).links()
		*pn = *next
	} else {
		c.front = *next
	}
	if *next != nil {
		np, _ := P(*next).links()
		*np = *prev
	} else {
		c.back = *prev
	}
	*prev, *next = nil, nil
	c.n--
}

// maxFree bounds each free list: a burst beyond it allocates, and gives
// its entries back to the collector afterwards.
const maxFree = 1024

// freeList recycles a Joiner's entries, threaded through their next.
type freeList[T any] struct {
	front *T
	n     int
}

func get[T any, P link[T]](f *freeList[T]) P {
	e := P(f.front)
	if e == nil {
		return P(new(T))
	}
	_, next := e.links()
	f.front, *next = *next, nil
	f.n--
	return e
}

// put clears e, so a recycled entry holds no sample's memory, and keeps
// it when the list has room.
func put[T any, P link[T]](f *freeList[T], e P) {
	var zero T
	*e = zero
	if f.n < maxFree {
		_, next := e.links()
		*next = f.front
		f.front = (*T)(e)
		f.n++
	}
}

// NewJoiner returns a Joiner passing samples on to next.
func NewJoiner(opt JoinOptions, next func(engine.Sample)) *Joiner {
	if opt.Wait <= 0 {
		opt.Wait = DefaultWait
	}
	if opt.MaxPendingSpans <= 0 {
		opt.MaxPendingSpans = DefaultMaxPendingSpans
	}
	if opt.RememberJoins <= 0 {
		opt.RememberJoins = DefaultRememberJoins
	}
	return &Joiner{opt: opt, next: next, byTrace: map[TraceID]slot{}, byReq: map[string]slot{}}
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
	key, ok := ParseTraceID(s.TraceID)
	if !ok {
		j.stats.Untraced++
		j.next(s)
		return
	}
	t := j.byTrace[key]
	if t.pend != nil {
		j.joinPending(&s, t.pend, false)
		return
	}
	reqTaken := false
	if s.RequestID != "" {
		var r slot
		if r, reqTaken = j.byReq[s.RequestID]; r.pend != nil {
			j.joinPending(&s, r.pend, true)
			return
		}
	}
	if t.held != nil {
		// Two requests under one trace id cannot both be matched to its
		// span; the later one goes on without.
		j.stats.NoSpan++
		j.next(s)
		return
	}
	j.hold(&s, key, j.wasJoined(key), reqTaken)
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
	if sp.TraceID == (TraceID{}) {
		// The Receiver rejects such spans; one given directly joins nothing.
		j.stats.Unjoined++
		return
	}
	t := j.byTrace[sp.TraceID]
	if t.held != nil && !t.held.wasJoined {
		j.joinHeld(sp, t.held, false)
		return
	}
	if t != (slot{}) || j.wasJoined(sp.TraceID) {
		// A span sent again (its span id is its trace's) or a second
		// request span of one trace, which cannot both be the request's.
		j.stats.Duplicates++
		return
	}
	reqTaken := false
	if id := sp.Server.RequestID; id != "" {
		var r slot
		if r, reqTaken = j.byReq[id]; r.held != nil {
			j.joinHeld(sp, r.held, true)
			return
		}
	}
	j.keep(sp, reqTaken)
}

// Flush ends the run: it waits until every held sample is joined or its
// Wait ended, or ctx ended, then passes on the rest without a span and
// counts the spans still waiting as Unjoined. Samples and spans given
// after it are counted (Late, Unjoined), never passed on.
func (j *Joiner) Flush(ctx context.Context) {
	j.mu.Lock()
	for j.held.n > 0 && !j.flushed {
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
	for j.held.n > 0 {
		j.release(j.held.front)
	}
	j.stats.Unjoined += int64(j.pending.n)
	// Nothing is looked up after Flush: the maps can go.
	j.pending = chain[pendingSpan]{}
	j.byTrace, j.byReq, j.joined, j.joinedOld = nil, nil, nil, nil
	j.freeHeld, j.freePend = freeList[heldSample]{}, freeList[pendingSpan]{}
}

// Stats is the Joiner's account so far; add the Receiver's with
// WithReceiver.
func (j *Joiner) Stats() JoinStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Pending = int64(j.pending.n)
	s.Held = int64(j.held.n)
	return s
}

// hold keeps a sample until its span comes; joined says its trace was
// joined before, reqTaken that another entry has its request id.
func (j *Joiner) hold(s *engine.Sample, key TraceID, joined, reqTaken bool) {
	h := get(&j.freeHeld)
	h.s, h.key, h.expires, h.wasJoined = *s, key, time.Now().Add(j.opt.Wait), joined
	pushBack(&j.held, h)
	j.byTrace[key] = slot{held: h}
	if s.RequestID != "" && !reqTaken {
		j.byReq[s.RequestID] = slot{held: h}
		h.byReq = true
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
	for h := j.held.front; h != nil; h = j.held.front {
		if h.expires.After(now) {
			j.arm(h.expires.Sub(now))
			return
		}
		j.release(h)
	}
}

// release passes a held sample on without a span.
func (j *Joiner) release(h *heldSample) {
	j.unhold(h)
	j.stats.NoSpan++
	j.next(h.s)
	put(&j.freeHeld, h)
}

// unhold takes a held sample out of the list and the maps.
func (j *Joiner) unhold(h *heldSample) {
	remove(&j.held, h)
	delete(j.byTrace, h.key)
	if h.byReq {
		delete(j.byReq, h.s.RequestID)
	}
	if j.held.n == 0 && j.drained != nil {
		close(j.drained)
		j.drained = nil
	}
}

func (j *Joiner) joinHeld(sp Span, h *heldSample, byRequestID bool) {
	j.unhold(h)
	j.deliverJoined(&h.s, &sp, byRequestID)
	put(&j.freeHeld, h)
}

func (j *Joiner) joinPending(s *engine.Sample, p *pendingSpan, byRequestID bool) {
	j.unkeep(p)
	j.deliverJoined(s, &p.sp, byRequestID)
	put(&j.freePend, p)
}

// deliverJoined passes s on with sp's server span; both are the caller's
// (a held sample is recycled after), so the span is copied out.
func (j *Joiner) deliverJoined(s *engine.Sample, sp *Span, byRequestID bool) {
	j.stats.Joined++
	if byRequestID {
		j.stats.ByRequestID++
	}
	j.remember(sp.TraceID)
	server := sp.Server
	s.Span = &server
	j.next(*s)
}

// keep holds a span whose sample has not come yet, evicting the oldest
// past the cap; reqTaken says another entry has its request id.
func (j *Joiner) keep(sp Span, reqTaken bool) {
	p := get(&j.freePend)
	p.sp = sp
	pushBack(&j.pending, p)
	j.byTrace[sp.TraceID] = slot{pend: p}
	if id := sp.Server.RequestID; id != "" && !reqTaken {
		j.byReq[id] = slot{pend: p}
		p.byReq = true
	}
	if j.pending.n > j.opt.MaxPendingSpans {
		old := j.pending.front
		j.unkeep(old)
		put(&j.freePend, old)
		j.stats.Evicted++
	}
}

// unkeep takes a pending span out of the list and the maps.
func (j *Joiner) unkeep(p *pendingSpan) {
	remove(&j.pending, p)
	delete(j.byTrace, p.sp.TraceID)
	if p.byReq {
		delete(j.byReq, p.sp.Server.RequestID)
	}
}

// remember marks a trace joined, so that a second span of it is known
// for a duplicate. When the newer generation is full it becomes the
// older, and the traces only the dropped one held are forgotten: a
// sample held under one of them is on its own again.
func (j *Joiner) remember(key TraceID) {
	if len(j.joined) >= j.opt.RememberJoins {
		j.joinedOld, j.joined = j.joined, nil
		for h := j.held.front; h != nil; h = h.next {
			if h.wasJoined {
				_, h.wasJoined = j.joinedOld[h.key]
			}
		}
	}
	if j.joined == nil {
		// Room for twice the generation: a map near its full load searches
		// long for a key it does not hold, and most keys looked up are not.
		j.joined = make(map[TraceID]struct{}, 2*j.opt.RememberJoins)
	}
	j.joined[key] = struct{}{}
}

// wasJoined reports a trace remembered as joined.
func (j *Joiner) wasJoined(key TraceID) bool {
	if _, ok := j.joined[key]; ok {
		return true
	}
	_, ok := j.joinedOld[key]
	return ok
}
