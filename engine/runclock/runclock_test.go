package runclock

import (
	"testing"
	"time"
)

// An instant's wall time and its monotonic reading advance together, as
// the monotonic clock does, whatever the system clock does meanwhile.
func TestNowFollowsMonotonicTime(t *testing.T) {
	a := Now()
	time.Sleep(20 * time.Millisecond)
	b := Now()
	mono := b.Sub(a)
	wall := b.Round(0).Sub(a.Round(0))
	if mono < 20*time.Millisecond {
		t.Fatalf("Now advanced %v over a 20ms sleep", mono)
	}
	if wall != mono {
		t.Errorf("wall times %v apart, monotonic readings %v: they must agree", wall, mono)
	}
	// The offset from the origin is the same read either way.
	if got, want := b.Round(0).Sub(origin.Round(0)), b.Sub(origin); got != want {
		t.Errorf("wall offset from the origin %v, monotonic %v", got, want)
	}
}
