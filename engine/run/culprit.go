package run

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/memlimit"
)

// culprit remembers the script line that was running when the memory
// bound was crossed: the iteration, VU init, setup or teardown running
// then is canceled, and its error names the line it stopped at. Safe for
// concurrent use.
type culprit struct {
	mem   *memlimit.Watcher
	mu    sync.Mutex
	first string
}

// linePrefix matches the "file:line:" that starts a script error.
var linePrefix = regexp.MustCompile(`^(.+?:\d+):`)

// note keeps err's line when it is the first error seen after the crossing.
func (c *culprit) note(err error) {
	if err == nil || c.mem.Exceeded() == nil {
		return
	}
	m := linePrefix.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == "" {
		c.first = m[1]
	}
}

func (c *culprit) line() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}

// wrap makes r's VUs, setup and teardown report their errors to c; r is
// returned as it is when no memory bound is watched.
func (c *culprit) wrap(r engine.Runner) engine.Runner {
	if c.mem == nil {
		return r
	}
	w := watchedRunner{r, c}
	if lc, ok := r.(engine.Lifecycle); ok {
		return watchedLifecycle{w, lc}
	}
	return w
}

type watchedRunner struct {
	r engine.Runner
	c *culprit
}

func (w watchedRunner) NewVU(ctx context.Context, id int) (engine.VU, error) {
	vu, err := w.r.NewVU(ctx, id)
	if err != nil {
		w.c.note(err)
		return nil, err
	}
	return watchedVU{vu, w.c}, nil
}

// watchedLifecycle keeps the runner's engine.Lifecycle visible to the
// executor, which looks for it with a type assertion.
type watchedLifecycle struct {
	watchedRunner
	lc engine.Lifecycle
}

func (w watchedLifecycle) Setup(ctx context.Context) error {
	err := w.lc.Setup(ctx)
	w.c.note(err)
	return err
}

func (w watchedLifecycle) Teardown(ctx context.Context) error {
	err := w.lc.Teardown(ctx)
	w.c.note(err)
	return err
}

type watchedVU struct {
	engine.VU
	c *culprit
}

func (v watchedVU) RunIteration(ctx context.Context, it engine.Iteration) error {
	err := v.VU.RunIteration(ctx, it)
	v.c.note(err)
	return err
}

// MemoryError is err restated when mem's bound was crossed while err's
// work ran (e.g. the script's top level in Compile): "file:line: memory
// limit N MB exceeded", with the line err names. Otherwise it is err.
func MemoryError(mem *memlimit.Watcher, err error) error {
	if err == nil || mem == nil {
		return err
	}
	ex := mem.Exceeded()
	if ex == nil {
		return err
	}
	if m := linePrefix.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s: %w (at init: the script's top level)", m[1], ex)
	}
	return fmt.Errorf("%w (at init: the script's top level)", ex)
}
