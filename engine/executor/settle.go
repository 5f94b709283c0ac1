package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmload/llmload/engine/capacity"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/runclock"
	"github.com/llmload/llmload/engine/servermetrics"
)

// How often the wait between capacity probes looks at the client's
// iterations and at the server's queue.
const (
	settlePoll      = 10 * time.Millisecond
	settleQueuePoll = 250 * time.Millisecond
	settleReadTries = 3
)

// ServerQueue reads how many requests the target holds by its own
// metrics (servermetrics.Scraper). Safe for concurrent use.
type ServerQueue interface {
	// Queue reads the server's running and waiting requests now.
	Queue() (servermetrics.QueueReading, error)
}

// SetServerQueue sets what reads the server's own queue between capacity
// probes (its scraped metrics); without one, a probe starts once the
// client's iterations have ended. It must be called before Run.
func (e *Engine) SetServerQueue(q ServerQueue) { e.queue = q }

// settle stops the load after a probe and waits, at most IdleTimeout,
// until every iteration has ended and the server's queue gauges read
// zero, so that the next probe measures its own load and not the backlog
// of the last. It reports how the wait ended; stop is non-empty when the
// server did not drain, or ctx ended.
func (c *capacityRun) settle(ctx context.Context, after string) (s capacity.Settle, stop string) {
	began := runclock.Now()
	deadline := began.Add(c.cs.IdleTimeout)
	c.load.pause(c.cs.IdleTimeout)
	s.Checked = true
	if !c.waitClient(ctx, deadline) {
		return s, stopReason(ctx)
	}
	s.Running = c.load.running()
	serverIdle := true
	if c.eng.queue != nil && s.Running == 0 {
		serverIdle, s.Server = c.waitServer(ctx, deadline)
		if ctx.Err() != nil {
			return s, stopReason(ctx)
		}
	}
	s.Idle = s.Running == 0 && serverIdle
	s.Began = runclock.Now()
	s.Waited = s.Began.Sub(began)
	if !s.Idle {
		return s, c.notDrained(after, s)
	}
	return s, ""
}

// waitClient waits until no iteration runs, or deadline; false when ctx
// ended first.
func (c *capacityRun) waitClient(ctx context.Context, deadline time.Time) bool {
	for c.load.running() > 0 && runclock.Now().Before(deadline) {
		if !sleepUntil(ctx, earliest(runclock.Now().Add(settlePoll), deadline)) {
			return false
		}
	}
	return true
}

// waitServer reads the server's queue until it is empty, or deadline:
// idle, and the last reading or why it failed.
//
// A server whose metrics have no queue gauge, or cannot be read
// settleReadTries times in a row, is taken as idle once the client's
// iterations have ended, and the reading says so.
func (c *capacityRun) waitServer(ctx context.Context, deadline time.Time) (idle bool, last string) {
	for failed := 0; ; {
		r, err := c.eng.queue.Queue()
		switch {
		case errors.Is(err, servermetrics.ErrNoQueue):
			return true, "no queue gauge in the server's metrics: started once llmload's requests had ended"
		case err != nil:
			if failed++; failed >= settleReadTries {
				return true, "the server's metrics could not be read (" + err.Error() + "): started once llmload's requests had ended"
			}
			last = "the server's metrics could not be read: " + err.Error()
		case r.Running+r.Waiting == 0:
			return true, r.Text
		default:
			failed, last = 0, r.Text
		}
		if !runclock.Now().Before(deadline) || !sleepUntil(ctx, earliest(runclock.Now().Add(settleQueuePoll), deadline)) {
			return false, last
		}
	}
}

// notDrained is why the search stops when the wait after probe after
// ended with the client or the server still busy.
func (c *capacityRun) notDrained(after string, s capacity.Settle) string {
	bound := plan.FormatDuration(c.cs.IdleTimeout)
	if s.Running > 0 {
		return fmt.Sprintf("the load did not drain within idle_timeout %s after %s: %d iterations still running; "+
			"no later probe could be judged on its own load (raise idle_timeout, or bound the requests with a timeout)", bound, after, s.Running)
	}
	return fmt.Sprintf("the server did not drain within idle_timeout %s after %s: %s; "+
		"no later probe could be judged on its own load (raise idle_timeout)", bound, after, s.Server)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
