package stopping

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Sleep(context.Background(), time.Second) || time.Since(start) != time.Second {
			t.Errorf("a full sleep: returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start = time.Now()
		if Sleep(ctx, time.Hour) || time.Since(start) != 300*time.Millisecond {
			t.Errorf("a canceled sleep: returned true or after %v", time.Since(start))
		}
		if Sleep(ctx, 0) {
			t.Error("a zero sleep on an ended context reported success")
		}
		if !Sleep(context.Background(), -time.Second) {
			t.Error("a negative sleep on a live context reported failure")
		}
	})
}
