package executor

import (
	"context"
	"time"
)

// Waits shorter than preciseWindow are finished with the sleeper's precise
// sleep (newPrecise): the Go runtime parks timers in epoll with millisecond
// resolution, which would add up to a millisecond of schedule lag to every
// arrival.
const (
	preciseWindow = 2 * time.Millisecond
	preciseMargin = 1500 * time.Microsecond
)

// sleeper waits for absolute deadlines, so errors never accumulate into
// drift. It reuses one timer; it is owned by one goroutine.
type sleeper struct {
	timer   *time.Timer
	precise func(time.Duration)
	release func()
}

func newSleeper() *sleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	precise, release := newPrecise()
	return &sleeper{timer: t, precise: precise, release: release}
}

// until waits for t, returning at once when t has passed; it reports
// whether t was reached before ctx ended.
func (s *sleeper) until(ctx context.Context, t time.Time) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return ctx.Err() == nil
		}
		if d <= preciseWindow {
			if ctx.Err() != nil {
				return false
			}
			s.precise(d)
			continue
		}
		s.timer.Reset(d - preciseMargin)
		select {
		case <-s.timer.C:
		case <-ctx.Done():
			s.timer.Stop()
			return false
		}
	}
}

// stop releases the timers.
func (s *sleeper) stop() {
	s.timer.Stop()
	s.release()
}
