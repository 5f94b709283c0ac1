package executor

import (
	"context"
	"testing"
	"time"
)

// TestTimerFDSleeps: a precise sleep never returns early, and (bounded
// generously for a busy machine) not much later either.
func TestTimerFDSleeps(t *testing.T) {
	tf, err := openTimerFD()
	if err != nil {
		t.Skip("no timerfd:", err)
	}
	defer tf.close()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 700 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		tf.sleep(d)
		if got := time.Since(start); got < d || got > d+200*time.Millisecond {
			t.Errorf("sleep(%v) took %v", d, got)
		}
	}
}

// TestSleeperReleasesItsTimer: every sleeper's precise timer is released
// by stop, so schedulers started and stopped many times leak no
// descriptors.
func TestSleeperReleasesItsTimer(t *testing.T) {
	released := 0
	saved := newPrecise
	newPrecise = func() (func(time.Duration), func()) { return time.Sleep, func() { released++ } }
	defer func() { newPrecise = saved }()
	for range 3 {
		s := newSleeper()
		s.until(context.Background(), time.Now().Add(time.Millisecond))
		s.stop()
	}
	if released != 3 {
		t.Errorf("%d of 3 sleepers released their timer", released)
	}
}
