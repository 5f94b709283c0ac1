package executor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// lifecycleRunner is a fakeRunner whose script has setup and teardown; it
// logs every call in order.
type lifecycleRunner struct {
	*fakeRunner
	setupErr    error
	teardownErr error

	mu          sync.Mutex
	log         []string
	teardownCtx error // ctx.Err() as teardown saw it
	teardownDL  bool  // whether teardown's ctx had a deadline
}

func newLifecycleRunner(fn func(context.Context, engine.Iteration) error) *lifecycleRunner {
	l := &lifecycleRunner{}
	l.fakeRunner = &fakeRunner{fn: func(ctx context.Context, it engine.Iteration) error {
		l.add("iteration")
		return fn(ctx, it)
	}}
	return l
}

func (l *lifecycleRunner) add(event string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, event)
}

func (l *lifecycleRunner) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

func (l *lifecycleRunner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	l.add("init")
	return l.fakeRunner.NewVU(ctx, id)
}

func (l *lifecycleRunner) Setup(ctx context.Context) error {
	l.add("setup")
	return l.setupErr
}

func (l *lifecycleRunner) Teardown(ctx context.Context) error {
	l.add("teardown")
	l.teardownCtx = ctx.Err()
	_, l.teardownDL = ctx.Deadline()
	return l.teardownErr
}

// phases collapses repeated events: init,init,setup,iteration,iteration → init,setup,iteration.
func phases(events []string) []string {
	return slices.Compact(events)
}

func TestSetupAndTeardownRunOnceAroundTheLoad(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := newLifecycleRunner(sleepFn(time.Millisecond))
		p := closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: 100 * time.Millisecond})
		p.Warmup.Requests = 2

		if err := New(p, l, &fakeSink{}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got, want := phases(l.events()), []string{"init", "setup", "iteration", "teardown"}; !slices.Equal(got, want) {
			t.Errorf("calls = %v, want %v", got, want)
		}
		if got, want := int(l.closed.Load()), 2; got != want {
			t.Errorf("VUs closed = %d, want %d", got, want)
		}
	})
}

func TestSetupErrorStopsRunBeforeAnyIteration(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := newLifecycleRunner(sleepFn(time.Millisecond))
		l.setupErr = errors.New("chat.lua:12: setup failed")
		err := New(closedPlan(plan.Stage{Name: "c1", Target: 1, Duration: time.Second}), l, &fakeSink{}).Run(context.Background())
		if !errors.Is(err, l.setupErr) {
			t.Fatalf("err = %v, want the setup error", err)
		}
		if got, want := l.events(), []string{"init", "setup"}; !slices.Equal(got, want) {
			t.Errorf("calls = %v, want %v", got, want)
		}
		if got, want := int(l.closed.Load()), 1; got != want {
			t.Errorf("VUs closed = %d, want %d", got, want)
		}
	})
}

func TestTeardownRunsAfterCancel(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := newLifecycleRunner(sleepFn(time.Hour))
		l.teardownErr = errors.New("chat.lua:30: teardown failed")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		err := New(closedPlan(plan.Stage{Name: "c2", Target: 2, Duration: time.Hour}), l, &fakeSink{}).Run(ctx)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, l.teardownErr) {
			t.Errorf("err = %v, want canceled joined with the teardown error", err)
		}
		events := l.events()
		if got, want := phases(events), []string{"init", "setup", "iteration", "teardown"}; !slices.Equal(got, want) {
			t.Errorf("calls = %v, want %v", got, want)
		}
		if l.teardownCtx != nil || !l.teardownDL {
			t.Errorf("teardown ctx: err %v, deadline %v; want a fresh bounded context", l.teardownCtx, l.teardownDL)
		}
	})
}
