package backoff

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/stopping"
)

var (
	refused  = engine.Result{Err: &engine.Error{Class: engine.ErrConnRefused, Message: "refused"}}
	reset    = engine.Result{Err: &engine.Error{Class: engine.ErrConnReset, Message: "EOF"}}
	answered = engine.Result{Status: 200}
	http503  = engine.Result{Status: 503, Err: &engine.Error{Class: "http_5xx:503", Message: "busy"}}
	slow     = engine.Result{Status: 200, Err: &engine.Error{Class: engine.ErrTimeoutTTFT, Message: "no text"}}
	silent   = engine.Result{Err: &engine.Error{Class: engine.ErrTimeoutTTFT, Message: "no response"}}
	canceled = engine.Result{Err: &engine.Error{Class: engine.ErrCanceled}}
)

// scripted answers with its results in turn (the last one forever) and
// records when each request was handed to it.
type scripted struct {
	results []engine.Result
	sent    []time.Time
}

func (s *scripted) Chat(ctx context.Context, _ *engine.ChatRequest) *engine.Result {
	s.sent = append(s.sent, time.Now())
	r := s.results[min(len(s.sent), len(s.results))-1]
	return &r
}

func noJitter(c *Client) *Client { c.rand = func() float64 { return 0 }; return c }

func TestUnreachable(t *testing.T) {
	tests := []struct {
		name string
		r    engine.Result
		want bool
	}{
		{"refused", refused, true},
		{"reset before headers", reset, true},
		{"connect timeout", engine.Result{Err: &engine.Error{Class: engine.ErrTimeoutConnect}}, true},
		{"reset after headers", engine.Result{Status: 200, Err: &engine.Error{Class: engine.ErrConnReset}}, false},
		{"503", http503, false},
		{"slow first token", slow, false},
		{"no response within the TTFT bound (an outage, but no back-off)", silent, false},
		{"canceled", engine.Result{Err: &engine.Error{Class: engine.ErrCanceled}}, false},
		{"ok", answered, false},
	}
	for _, tt := range tests {
		if got := Unreachable(&tt.r); got != tt.want {
			t.Errorf("%s: Unreachable = %v, want %v", tt.name, got, tt.want)
		}
	}
	for r, want := range map[*engine.Result]bool{&silent: true, &slow: false, &refused: false, &answered: false} {
		if got := Unanswered(r); got != want {
			t.Errorf("Unanswered(%+v) = %v, want %v", *r, got, want)
		}
	}
}

func TestWaitsDoubleUpToTheCapAndResetOnAnyResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused, refused, refused, refused, refused, refused, refused, refused,
			http503, reset, answered}}
		c := noJitter(New(inner, Policy{Base: 50 * time.Millisecond, Max: 400 * time.Millisecond}, nil))
		start := time.Now()
		for range 11 {
			c.Chat(t.Context(), &engine.ChatRequest{})
		}
		// Gaps: 50, 100, 200, 400 (cap), 400, 400, 400 after the refusals,
		// none after the 503 (a response), 50 again after the lone reset.
		want := []time.Duration{0, 50, 150, 350, 750, 1150, 1550, 1950, 2350, 2350, 2400}
		for i, at := range inner.sent {
			if got := at.Sub(start); got != want[i]*time.Millisecond {
				t.Errorf("request %d sent at %v, want %v", i+1, got, want[i]*time.Millisecond)
			}
		}
	})
}

func TestTimeSpentElsewhereCountsTowardTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused}}
		c := noJitter(New(inner, Policy{Base: time.Second, Max: time.Second}, nil))
		start := time.Now()
		c.Chat(t.Context(), &engine.ChatRequest{})
		time.Sleep(700 * time.Millisecond) // the script's think time
		c.Chat(t.Context(), &engine.ChatRequest{})
		if got, want := inner.sent[1].Sub(start), time.Second; got != want {
			t.Errorf("second request at %v, want %v", got, want)
		}
	})
}

func TestJitterOnlyLengthensTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused}}
		c := New(inner, Policy{Base: time.Second, Max: time.Second, Jitter: 0.25}, nil)
		for range 50 {
			c.Chat(t.Context(), &engine.ChatRequest{})
		}
		for i := 1; i < len(inner.sent); i++ {
			if gap := inner.sent[i].Sub(inner.sent[i-1]); gap < time.Second || gap > 1250*time.Millisecond {
				t.Fatalf("gap %d = %v, want within [1s, 1.25s]", i, gap)
			}
		}
	})
}

func TestWaitEndsWithTheContextAndSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused}}
		c := noJitter(New(inner, Policy{Base: 10 * time.Second, Max: 10 * time.Second}, nil))
		c.Chat(t.Context(), &engine.ChatRequest{})
		stop := errors.New("stage ended")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(time.Second, func() { cancel(stop) })
		start := time.Now()
		r := c.Chat(ctx, &engine.ChatRequest{})
		if got, want := time.Since(start), time.Second; got != want {
			t.Errorf("wait returned after %v, want %v", got, want)
		}
		if r.Err == nil || r.Err.Class != engine.ErrCanceled || !strings.Contains(r.Err.Message, "stage ended") || !r.NotSent {
			t.Errorf("result = %+v (error %+v), want canceled, not sent, naming the cause", r, r.Err)
		}
		if got := len(inner.sent); got != 1 {
			t.Errorf("%d requests sent, want 1", got)
		}
	})
}

// A VU whose stage ended while it backed off must not send one more
// request into the graceful-stop tail, even though its context lives on
// for the graceful stop.
func TestWaitEndsWhenTheVUIsStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused}}
		c := noJitter(New(inner, Policy{Base: 10 * time.Second, Max: 10 * time.Second}, nil))
		c.Chat(t.Context(), &engine.ChatRequest{})
		stop := make(chan struct{})
		time.AfterFunc(2*time.Second, func() { close(stop) })
		start := time.Now()
		r := c.Chat(stopping.With(t.Context(), stop), &engine.ChatRequest{})
		if got, want := time.Since(start), 2*time.Second; got != want {
			t.Errorf("wait returned after %v, want %v", got, want)
		}
		if !r.NotSent || r.Err == nil || r.Err.Class != engine.ErrCanceled {
			t.Errorf("result = %+v, want a canceled result marked NotSent", r)
		}
		if got := len(inner.sent); got != 1 {
			t.Errorf("%d requests sent, want 1", got)
		}
	})
}

// TestAttemptRateBound checks the documented bound: against a dead target
// one VU makes at most 6 + D/2 attempts in D seconds.
func TestAttemptRateBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &scripted{results: []engine.Result{refused}}
		c := New(inner, DefaultPolicy(), nil)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			c.Chat(ctx, &engine.ChatRequest{})
		}
		if got, bound := len(inner.sent), 6+60/2; got > bound || got < bound*3/4 {
			t.Errorf("%d attempts in 60 s, want at most %d (and not far fewer)", got, bound)
		}
	})
}
