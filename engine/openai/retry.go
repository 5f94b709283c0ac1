package openai

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/stopping"
)

// Preflight's retries of transient answers: a busy but healthy server (a
// 429, a 503 while a model loads, Anthropic's 529, a reset) or one still starting (refused
// connections) should not fail a run before it starts.
const (
	// PreflightAttempts bounds the tries of each preflight request.
	PreflightAttempts = 4
	// PreflightRetryBudget bounds the time spent waiting between tries.
	PreflightRetryBudget = 30 * time.Second
	// preflightBackoff is the first wait, doubled before each next one.
	preflightBackoff = 500 * time.Millisecond
	// preflightMaxWait caps one wait, a server's Retry-After included.
	preflightMaxWait = 15 * time.Second
	// preflightStartup is how long refused connections count as a server
	// starting up; after it, nothing is listening.
	preflightStartup = 5 * time.Second
)

// attempt is what the retry loop needs to know of one failed try.
type attempt struct {
	class      string // engine error class
	status     int    // HTTP status; 0 without a response
	retryAfter string // the Retry-After header, if any
}

// label names the failure in the retry summary: the status, or the class.
func (a attempt) label() string {
	if a.status != 0 {
		return strconv.Itoa(a.status)
	}
	return a.class
}

// transient reports whether a try that failed so, elapsed after the first
// one started, is worth another.
func (a attempt) transient(elapsed time.Duration) bool {
	switch a.status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
		statusOverloaded:
		return true
	}
	switch a.class {
	case engine.ErrConnReset:
		return true
	case engine.ErrConnRefused:
		return elapsed < preflightStartup
	}
	return false
}

// retries runs the tries of one Preflight and keeps what they met. It is
// used by one goroutine.
type retries struct {
	sleep  func(context.Context, time.Duration) error
	now    func() time.Time
	start  time.Time
	waited time.Duration
	failed []string // labels of the failed tries that were retried, in order
}

func (c *Client) newRetries() *retries {
	return &retries{sleep: c.sleep, now: c.now, start: c.now()}
}

// do calls try until it succeeds, fails for good, or the attempts or the
// budget run out; it returns try's last error, with the retries told.
func (r *retries) do(ctx context.Context, try func() (attempt, error)) error {
	backoff := preflightBackoff
	for n := 1; ; n++ {
		a, err := try()
		if err == nil {
			return nil
		}
		wait := min(max(backoff, retryAfter(a.retryAfter, r.now())), preflightMaxWait)
		if n >= PreflightAttempts || !a.transient(r.now().Sub(r.start)) || r.waited+wait > PreflightRetryBudget {
			return r.annotate(err, a)
		}
		r.failed = append(r.failed, a.label())
		if r.sleep(ctx, wait) != nil {
			return r.annotate(err, a)
		}
		r.waited += wait
		backoff *= 2
	}
}

// retryAfter reads a Retry-After header (seconds or an HTTP date) as a wait.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
		return time.Duration(min(s, 3600) * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// summary says what was retried, e.g. "503 twice, then ok after 1.2 s";
// empty when the first try of every request succeeded.
func (r *retries) summary() string {
	if len(r.failed) == 0 {
		return ""
	}
	return story(r.failed) + ", then ok after " + seconds(r.now().Sub(r.start))
}

// story groups failures in order: "429 once, then 503 twice".
func story(failed []string) string {
	var parts []string
	for i := 0; i < len(failed); {
		j := i
		for j < len(failed) && failed[j] == failed[i] {
			j++
		}
		parts = append(parts, failed[i]+" "+times(j-i))
		i = j
	}
	return strings.Join(parts, ", then ")
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// annotate adds the retries to a final error, so that a user sees that
// llmload waited and for what.
func (r *retries) annotate(err error, last attempt) error {
	if len(r.failed) == 0 {
		return err
	}
	tries := append(r.failed, last.label())
	note := fmt.Sprintf(" (after %d tries over %s: %s)", len(tries), seconds(r.now().Sub(r.start)), story(tries))
	if pe, ok := err.(*preflightError); ok {
		return &preflightError{msg: pe.msg + note, err: pe.err}
	}
	return fmt.Errorf("%w%s", err, note)
}

// sleepCtx waits d or until ctx ends, with its cause.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if stopping.Sleep(ctx, d) {
		return nil
	}
	return context.Cause(ctx)
}
