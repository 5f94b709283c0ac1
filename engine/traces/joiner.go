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
//
// Trace ids are keyed by their 16 bytes, not their 32 hex digits, and the
// held samples and pending spans are lists threaded through the entries
// themselves: a join costs a few small-key map operations and one
// allocation per entry, the measured floor of this path.
type Joiner struct {
	opt  JoinOptions
	next func(engine.Sample)

	mu          sync.Mutex
	held        chain[heldSample] // oldest (soonest to expire) first
	heldByTrace map[traceKey]*heldSample
	heldByReq   map[string]*heldSample
	pending     chain[pendingSpan] // oldest first
	pendByTrace map[traceKey]*pendingSpan
	pendByReq   map[string]*pendingSpan
	joined      []traceKey // ring of the last MaxPendingSpans joined traces
	joinedNext  int
	joinedTrace map[traceKey]struct{}
	timer       *time.Timer
	armed       bool
	drained     chan struct{} // closed when the last held sample leaves
	flushed     bool
	stats       JoinStats
}

// traceKey is a trace id's 16 bytes.
type traceKey [16]byte

// keyOf is the key of a trace id in hex; ok is false for one that is not
// 32 hex digits, which no join can match.
func keyOf(id string) (k traceKey, ok bool) {
	if len(id) != 32 {
		return k, false
	}
	for i := range k {
		hi, ok1 := nibble(id[2*i])
		lo, ok2 := nibble(id[2*i+1])
		if !ok1 || !ok2 {
			return k, false
		}
		k[i] = hi<<4 | lo
	}
	return k, true
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

type heldSample struct {
	s          engine.Sample
	key        traceKey
	expires    time.Time
	prev, next *heldSample
}

type pendingSpan struct {
	sp         Span
	key        traceKey
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
		heldByTrace: map[traceKey]*heldSample{}, heldByReq: map[string]*heldSample{},
		pendByTrace: map[traceKey]*pendingSpan{}, pendByReq: map[string]*pendingSpan{},
		joinedTrace: map[traceKey]struct{}{},
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
	key, ok := keyOf(s.TraceID)
	if !ok {
		j.stats.Untraced++
		j.next(s)
		return
	}
	if e, ok := j.pendByTrace[key]; ok {
		j.joinPending(s, e, false)
		return
	}
	if e, ok := j.pendByReq[s.RequestID]; ok && s.RequestID != "" {
		j.joinPending(s, e, true)
		return
	}
	if _, dup := j.heldByTrace[key]; dup {
		// Two requests under one trace id cannot both be matched to its
		// span; the later one goes on without.
		j.stats.NoSpan++
		j.next(s)
		return
	}
	j.hold(s, key)
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
	key, ok := keyOf(sp.TraceID)
	if !ok {
		// The Receiver rejects such spans; one given directly joins nothing.
		j.stats.Unjoined++
		return
	}
	if j.duplicate(key) {
		j.stats.Duplicates++
		return
	}
	if e, ok := j.heldByTrace[key]; ok {
		j.joinHeld(sp, key, e, false)
		return
	}
	if e, ok := j.heldByReq[sp.Server.RequestID]; ok && sp.Server.RequestID != "" {
		j.joinHeld(sp, key, e, true)
		return
	}
	j.keep(sp, key)
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
	j.pending = chain[pendingSpan]{}
	clear(j.pendByTrace)
	clear(j.pendByReq)
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

// duplicate reports a span of a trace already joined or waiting: a span
// sent again (its span id is its trace's) or a second request span of one
// trace, which cannot both be the request's.
func (j *Joiner) duplicate(key traceKey) bool {
	_, joined := j.joinedTrace[key]
	_, waiting := j.pendByTrace[key]
	return joined || waiting
}

func (j *Joiner) hold(s engine.Sample, key traceKey) {
	h := &heldSample{s: s, key: key, expires: time.Now().Add(j.opt.Wait)}
	pushBack(&j.held, h)
	j.heldByTrace[key] = h
	if _, taken := j.heldByReq[s.RequestID]; s.RequestID != "" && !taken {
		j.heldByReq[s.RequestID] = h
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
}

func (j *Joiner) unhold(h *heldSample) {
	remove(&j.held, h)
	delete(j.heldByTrace, h.key)
	if j.heldByReq[h.s.RequestID] == h {
		delete(j.heldByReq, h.s.RequestID)
	}
	if j.held.n == 0 && j.drained != nil {
		close(j.drained)
		j.drained = nil
	}
}

func (j *Joiner) joinHeld(sp Span, key traceKey, h *heldSample, byRequestID bool) {
	j.unhold(h)
	j.deliverJoined(h.s, sp, key, byRequestID)
}

func (j *Joiner) joinPending(s engine.Sample, p *pendingSpan, byRequestID bool) {
	j.unkeep(p)
	j.deliverJoined(s, p.sp, p.key, byRequestID)
}

func (j *Joiner) deliverJoined(s engine.Sample, sp Span, key traceKey, byRequestID bool) {
	j.stats.Joined++
	if byRequestID {
		j.stats.ByRequestID++
	}
	j.remember(key)
	server := sp.Server
	s.Span = &server
	j.next(s)
}

// keep holds a span whose sample has not come yet, evicting the oldest
// past the cap.
func (j *Joiner) keep(sp Span, key traceKey) {
	p := &pendingSpan{sp: sp, key: key}
	pushBack(&j.pending, p)
	j.pendByTrace[key] = p
	if _, taken := j.pendByReq[sp.Server.RequestID]; sp.Server.RequestID != "" && !taken {
		j.pendByReq[sp.Server.RequestID] = p
	}
	if j.pending.n > j.opt.MaxPendingSpans {
		j.unkeep(j.pending.front)
		j.stats.Evicted++
	}
}

func (j *Joiner) unkeep(p *pendingSpan) {
	remove(&j.pending, p)
	delete(j.pendByTrace, p.key)
	if j.pendByReq[p.sp.Server.RequestID] == p {
		delete(j.pendByReq, p.sp.Server.RequestID)
	}
}

// remember records a join so that a second span of the trace is known
// for a duplicate; the ring keeps the memory bounded.
func (j *Joiner) remember(key traceKey) {
	if len(j.joined) < j.opt.MaxPendingSpans {
		j.joined = append(j.joined, key)
	} else {
		delete(j.joinedTrace, j.joined[j.joinedNext])
		j.joined[j.joinedNext] = key
		j.joinedNext = (j.joinedNext + 1) % len(j.joined)
	}
	j.joinedTrace[key] = struct{}{}
}
