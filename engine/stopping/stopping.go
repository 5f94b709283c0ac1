// Package stopping carries an iteration's "asked to stop" signal in its
// context, and sleeps that end early when the context does.
package stopping

import "context"

type stoppingKey struct{}

// With returns ctx carrying stop, a channel the executor closes
// when the iteration's VU has been asked to stop (its stage or scenario
// ended) but may still finish within its graceful stop. Work that waits
// before sending, such as a back-off, selects on it so a stopped VU does
// not send one more request into the graceful-stop tail.
func With(ctx context.Context, stop <-chan struct{}) context.Context {
	if stop == nil {
		return ctx
	}
	return context.WithValue(ctx, stoppingKey{}, stop)
}

// From returns the channel With attached to ctx, or nil, which
// is never ready in a select, when none was.
func From(ctx context.Context) <-chan struct{} {
	stop, _ := ctx.Value(stoppingKey{}).(<-chan struct{})
	return stop
}
