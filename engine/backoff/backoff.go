// Package backoff keeps a VU from looping hot against a target that stops
// answering. A Client wraps one VU's engine.Client: after a request that got
// no response at all (refused, reset before the headers, a connect timeout)
// the VU's next request waits, exponentially longer up to a cap, until a
// request gets any HTTP response again. The wait happens before the next
// request is handed to the connection, so it is never inside a timed
// interval (t0 is stamped after it).
//
// With Policy's defaults (50 ms doubling to 2 s, up to 25% jitter added)
// one VU makes at most 6 attempts in the first 1.55 s of an outage and then
// at most one every 1.6 s, then every 2 s: N VUs make at most N·(6 + D/2)
// attempts in an outage of D seconds, about N/2 per second.
//
// A Tracker observes every VU's outcomes and records the outages run-wide.
package backoff

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/stopping"
)

// Defaults of Policy.
const (
	DefaultBase   = 50 * time.Millisecond
	DefaultMax    = 2 * time.Second
	DefaultJitter = 0.25
)

// Policy is how long a VU waits after consecutive unreachable failures:
// Base after the first, doubling after each further one up to Max, each
// wait lengthened by a random share of up to Jitter of itself so that VUs
// failing together do not retry in lockstep. Jitter only adds, so Max is
// also the shortest wait once capped, which makes VUs/Max a bound on the
// attempt rate.
type Policy struct {
	Base, Max time.Duration
	Jitter    float64
}

// DefaultPolicy is the policy a run uses.
func DefaultPolicy() Policy {
	return Policy{Base: DefaultBase, Max: DefaultMax, Jitter: DefaultJitter}
}

// delay is the wait after n consecutive unreachable failures (n ≥ 1),
// before jitter.
func (p Policy) delay(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// Unreachable reports whether r failed without any response from the
// target: the connection was refused, reset before the response headers,
// or could not be made in time. A slow answer (timeout_ttft) is not
// unreachable: the server took the request.
func Unreachable(r *engine.Result) bool {
	if r.Err == nil || r.Status != 0 {
		return false
	}
	switch r.Err.Class {
	case engine.ErrConnRefused, engine.ErrConnReset, engine.ErrTimeoutConnect, engine.ErrNetwork:
		return true
	}
	return false
}

// Unanswered reports whether r got no response at all before its TTFT
// bound: not even headers, as over a link that stopped passing data. A
// streaming server sends its headers before the first token, so a slow
// answer is not this; a server that holds them until its first token and
// is slower than the bound looks the same, and for that long answered
// nothing either. It does not back a VU off: the request waited its bound.
func Unanswered(r *engine.Result) bool {
	return r.Err != nil && r.Status == 0 && r.Err.Class == engine.ErrTimeoutTTFT
}

// Answered reports whether the target sent any HTTP response to r, an
// error status included.
func Answered(r *engine.Result) bool { return r.Status != 0 }

// Observer is told the outcome of every request a Client sends, at the
// moment it is known. Implementations are safe for concurrent use.
type Observer interface {
	Observe(r *engine.Result, at time.Time)
}

// Client is one VU's engine.Client that backs off after unreachable
// failures. It is safe for concurrent use: the branches of a VU's
// llm.parallel send through it at once, and share its back-off.
type Client struct {
	inner    engine.Client
	policy   Policy
	obs      Observer // nil: none
	mu       sync.Mutex
	failures int // consecutive unreachable failures
	next     time.Time
	rand     func() float64
}

// New wraps inner with policy; obs, when not nil, observes every outcome.
func New(inner engine.Client, policy Policy, obs Observer) *Client {
	return &Client{inner: inner, policy: policy, obs: obs, rand: rand.Float64}
}

// Chat waits out the back-off, if any, then sends req. A wait cut short by
// ctx, or by the VU being stopped (engine.Stopping: its stage ended, so a
// request sent now would land in the graceful-stop tail), sends nothing and
// returns a canceled result marked NotSent. Time the VU spent elsewhere
// since the failure (think time, other work) counts toward the wait.
func (c *Client) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	if why := c.wait(ctx); why != "" {
		return &engine.Result{Start: time.Now(), NotSent: true,
			Err: &engine.Error{Class: engine.ErrCanceled, Message: why}}
	}
	r := c.inner.Chat(ctx, req)
	now := time.Now()
	c.mu.Lock()
	switch {
	case Unreachable(r):
		c.failures++
		d := c.policy.delay(c.failures)
		c.next = now.Add(d + time.Duration(c.policy.Jitter*c.rand()*float64(d)))
	case Answered(r):
		c.failures, c.next = 0, time.Time{}
	}
	c.mu.Unlock()
	if c.obs != nil {
		c.obs.Observe(r, now)
	}
	return r
}

// wait sleeps until the back-off ends; it returns why not, when ctx ended
// or the VU was stopped first, and "" when the request may go.
func (c *Client) wait(ctx context.Context) string {
	c.mu.Lock()
	next := c.next
	c.mu.Unlock()
	d := time.Until(next)
	if next.IsZero() || d <= 0 {
		return "" // no wait: the inner client handles an ended ctx
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ""
	case <-ctx.Done():
		return "not sent: " + context.Cause(ctx).Error() + " while backing off from an unreachable target"
	case <-stopping.From(ctx):
		return "not sent: the VU was stopped while backing off from an unreachable target"
	}
}
