package history

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestDuplicateSQLite(t *testing.T)   { testDuplicate(t, sqliteSource) }
func TestDuplicatePostgres(t *testing.T) { testDuplicate(t, postgresSource) }

// testDuplicate: a result stored with Unique is stored once, also when
// several writers store it at the same moment; without Unique (a run
// storing itself) nothing is looked up.
func testDuplicate(t *testing.T, open func(t testing.TB) Source) {
	s := openStore(t, open(t))
	r := makeResult(runSpec{seed: 41})
	ctx := context.Background()
	const writers = 8
	// Every writer that gets past the look-up waits for the others there
	// (at most half a second: behind the lock, they never come), so that
	// without the lock all of them would insert.
	var arrived sync.WaitGroup
	arrived.Add(writers)
	afterDuplicateCheck = func() {
		arrived.Done()
		done := make(chan struct{})
		go func() { arrived.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
		}
	}
	defer func() { afterDuplicateCheck = nil }()
	ids := make([]int64, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			ids[i], errs[i] = s.Save(ctx, Entry{Result: r, Verdict: VerdictPassed, Source: "import", Unique: true})
		})
	}
	wg.Wait()
	stored, dups := 0, 0
	var first int64
	for i, err := range errs {
		var dup *DuplicateError
		switch {
		case err == nil:
			stored++
			first = ids[i]
		case errors.As(err, &dup):
			dups++
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if stored != 1 || dups != writers-1 {
		t.Fatalf("%d stored and %d refused as duplicates, want 1 and %d", stored, dups, writers-1)
	}
	for i, err := range errs {
		var dup *DuplicateError
		if errors.As(err, &dup) && (dup.ID != first || ids[i] != first) {
			t.Errorf("writer %d: duplicate of run %d (returned %d), want %d", i, dup.ID, ids[i], first)
		}
	}
	if _, err := s.Save(ctx, Entry{Result: r, Verdict: VerdictPassed, Source: "run"}); err != nil {
		t.Errorf("Save without Unique: %v", err)
	}
	if runs, err := s.List(ctx, Filter{}); err != nil || len(runs) != 2 {
		t.Errorf("List: %d runs (%v), want 2", len(runs), err)
	}
}
