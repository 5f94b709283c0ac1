package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// interruptSignals stop a run: the first gracefully, a second at once.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// errInterrupted is the cause of a run stopped by a signal.
var errInterrupted = fmt.Errorf("interrupted")

// notifySignals returns a context the first interrupt signal cancels and a
// channel a second one closes; stop releases the signals.
func notifySignals(stderr io.Writer, quiet bool) (ctx context.Context, abort <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, interruptSignals...)
	second, done := make(chan struct{}), make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if n > 0 {
					close(second)
					return
				}
				cancel(errInterrupted)
				if !quiet {
					fmt.Fprintf(stderr, "%v: stopping the run (again to exit at once)\n", sig)
				}
			}
		}
	}()
	return ctx, second, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
