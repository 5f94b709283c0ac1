package outbox

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Closing while senders block on a full buffer loses nothing and panics
// nowhere: every value is either received or refused.
func TestOutboxCloseUnderSenders(t *testing.T) {
	for _, buffer := range []int{0, 1, 64} {
		o := New[int](buffer)
		var received int64
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for range o.Receive() {
				received++
			}
		}()
		var accepted, refused atomic.Int64
		var wg sync.WaitGroup
		const senders, each = 8, 2000
		for range senders {
			wg.Go(func() {
				for i := range each {
					if o.Send(i) {
						accepted.Add(1)
					} else {
						refused.Add(1)
					}
				}
			})
		}
		for accepted.Load() == 0 { // close only once sending is under way
			runtime.Gosched()
		}
		o.Close()
		o.Close() // idempotent
		wg.Wait()
		<-drained
		if got, want := accepted.Load()+refused.Load(), int64(senders*each); got != want {
			t.Errorf("buffer %d: accepted + refused = %d, want %d", buffer, got, want)
		}
		if got, want := received, accepted.Load(); got != want {
			t.Errorf("buffer %d: received %d, want every accepted value (%d)", buffer, got, want)
		}
		if o.Send(1) {
			t.Errorf("buffer %d: a Send after Close was accepted", buffer)
		}
	}
}
