// Package outbox is a buffered channel that many goroutines send on and one
// drains, which closes without ever closing under a sender.
package outbox

import "sync"

// Outbox is a buffered channel that many goroutines send on and one
// goroutine drains, closed once without ever closing under a sender: Send
// holds a shared lock across its send and Close takes it exclusively, so
// a value is either delivered before the close or refused after it.
// Nothing accepted is lost and no Send panics. It is the one way to close
// a many-sender channel (a single sender simply closes its own channel
// after its last send). Safe for concurrent use.
type Outbox[T any] struct {
	mu     sync.RWMutex
	closed bool
	ch     chan T
}

// New returns an open Outbox that buffers up to n values.
func New[T any](n int) *Outbox[T] { return &Outbox[T]{ch: make(chan T, max(n, 0))} }

// Send queues v, blocking while the buffer is full, and reports whether it
// was accepted: false once Close has begun.
func (o *Outbox[T]) Send(v T) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.closed {
		return false
	}
	o.ch <- v
	return true
}

// Receive is the channel the consumer drains. It is closed by Close, after
// every accepted value.
func (o *Outbox[T]) Receive() <-chan T { return o.ch }

// Close refuses further sends and closes the receive channel once the
// sends in progress have delivered, so the consumer must keep draining
// until then. Later calls do nothing.
func (o *Outbox[T]) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.closed = true
		close(o.ch)
	}
}
