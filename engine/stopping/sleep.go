package stopping

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends; it reports whether d passed with ctx
// still live. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
