package memlimit

import (
	"context"
	"sync/atomic"
	"time"
)

// The Watcher's own goroutine reads memory on a timer, and a timer needs
// the scheduler: a goroutine that allocates without pause (a script
// doubling a string) can cross the bound and start its next, larger
// allocation before that goroutine runs. While a large allocation copies,
// the collector it started holds the other processor waiting for this one
// to reach a safe point, so on two cores nothing else runs until it ends.
// Under an address-space limit (ulimit -v) the allocation after that fails
// and the runtime dies of it: CI saw it once, 2 GB asked for under a
// 512 MB bound. A guarded context closes the gap on the allocating
// goroutine itself: an allocation that could cross the bound takes
// milliseconds, so after a Lua instruction that long it reads memory
// before the next.

// active is the running Watcher Guard checks against: the process has one
// bound, and the Lua states that must see it are made far from the code
// that started it.
var active atomic.Pointer[Watcher]

// LongStep is how long a step between two looks of a guarded context must
// take for the next look to read memory: far above a Lua instruction
// (tens of ns), below the copy of the smallest allocation that can cross
// a bound from under it (tens of MB at least; here the doublings to 256
// and 512 MB took hundreds of milliseconds each, GODEBUG=gctrace=1).
const LongStep = time.Millisecond

// lookEvery is how many calls of Done a guarded context takes between two
// looks at the clock, which costs about 25 ns, nearly a Lua instruction's
// time. A look falls within four instructions of the one that crossed the
// bound, and a doubling loop is four instructions (its operands are moved
// into place first), so the look comes before the next doubling.
const lookEvery = 4

// epoch is what the guarded contexts' clock counts from.
var epoch = time.Now()

// Guard returns ctx, or, while a Watcher with a bound runs, a context that
// also ends when, after a long step, its Done finds the bound crossed: on
// the goroutine that asks, with no other goroutine needed. Give it to one
// Lua state (LState.SetContext), which asks Done before every instruction.
// Its Err is context.Canceled once the bound is crossed, possibly before
// the cancellation has reached ctx; the Watcher's Exceeded says why. A
// guarded context is not safe for concurrent use.
func Guard(ctx context.Context) context.Context {
	w := active.Load() // Start registers only a Watcher with a bound
	if w == nil {
		return ctx
	}
	return &guarded{Context: ctx, w: w}
}

type guarded struct {
	context.Context
	w    *Watcher
	n    uint32
	last time.Duration // since epoch, at the last look; 0 before the first
}

// closed is the Done channel of a guarded context past its bound.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (g *guarded) Done() <-chan struct{} {
	if g.w.over.Load() {
		return closed
	}
	if g.n++; g.n%lookEvery == 0 && g.look() {
		return closed
	}
	return g.Context.Done()
}

// look reads memory when the step since the last look was long, and
// reports whether that found the bound crossed.
func (g *guarded) look() bool {
	now := time.Since(epoch)
	long := g.last != 0 && now-g.last > LongStep
	g.last = now
	return long && !g.w.stopped.Load() && g.w.check(g.w.read())
}

func (g *guarded) Err() error {
	if err := g.Context.Err(); err != nil {
		return err
	}
	if g.w.over.Load() {
		return context.Canceled
	}
	return nil
}
