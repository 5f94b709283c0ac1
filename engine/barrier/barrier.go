// Package barrier starts a plan's segments together once every one of
// them is ready (llmload run --barrier DIR), through a directory they all
// share: each segment writes DIR/ready-i when its VUs, setup and warmup are
// done, and every segment computes the one start instant from the full set
// of files. It is k6-operator's starter, without a starter: no process
// but the segments, no network between them, only the shared directory
// (a ReadWriteMany volume, an NFS export, one machine's /tmp).
//
// The files are the whole protocol: ready-i holds a Ready, abort-i an
// Abort; both are written atomically (a temporary file, fsync, rename),
// so a reader sees a whole file or none.
package barrier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// Defaults of Config's durations.
const (
	// DefaultLead is how long after the last segment was ready the load
	// starts: it covers the poll interval and a shared file system's
	// propagation delay, so that every segment has seen the last file
	// before the instant they all computed from it.
	DefaultLead = 2 * time.Second
	// DefaultTimeout bounds the wait, from the segment's own ready time.
	DefaultTimeout = 10 * time.Minute
	// DefaultPoll is how often the directory is read.
	DefaultPoll = 200 * time.Millisecond
	// LogEvery bounds how often the wait says how many segments are ready.
	LogEvery = 10 * time.Second
	// Round is the grain of the start instant.
	Round = 100 * time.Millisecond
)

// Config is one segment's place at the barrier. Dir, Count and
// Fingerprint are required.
type Config struct {
	Dir         string // the shared directory; created if missing
	Index       int    // this segment, 0-based
	Count       int    // the segments of the plan
	Fingerprint string // the plan's (plan.Parts.Fingerprint)
	// Parts, when set, let a mismatch name what differs (plan.Diff).
	Parts   *plan.Parts
	Host    string        // this machine, for the others' messages
	Lead    time.Duration // 0: DefaultLead
	Timeout time.Duration // 0: DefaultTimeout
	Poll    time.Duration // 0: DefaultPoll
	// Log receives a line on arrival, at most every LogEvery while
	// waiting, and when the start is known; nil drops them.
	Log func(format string, a ...any)
}

func (c Config) withDefaults() Config {
	if c.Lead <= 0 {
		c.Lead = DefaultLead
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	return c
}

// Wait writes this segment's ready file and waits until every segment's
// exists, then returns the start instant they all compute: the latest
// ready time plus Lead, rounded up to Round. A start already passed is
// returned as it is (the caller starts at once and records the lateness).
// It fails at once on an abort file, a ready file of another plan or
// segment count, or when this segment arrives after the others started;
// after Timeout it writes its own abort file, so that the others stop
// waiting too, and fails naming the segments that never came. When ctx
// ends it returns ctx's error.
func Wait(ctx context.Context, cfg Config) (time.Time, error) {
	cfg = cfg.withDefaults()
	if err := ensureDir(cfg.Dir); err != nil {
		return time.Time{}, err
	}
	st, err := scan(cfg)
	if err != nil {
		return time.Time{}, err
	}
	if st.complete(cfg.Count) {
		return arriveAfterAll(cfg, st)
	}
	me := Ready{Index: cfg.Index, Count: cfg.Count, ReadyAt: time.Now().UTC(), Plan: cfg.Fingerprint,
		PlanParts: cfg.Parts, Host: cfg.Host}
	if err := writeJSON(cfg.Dir, readyName(cfg.Index), me); err != nil {
		return time.Time{}, err
	}
	return poll(ctx, cfg, me.ReadyAt.Add(cfg.Timeout))
}

// arriveAfterAll joins a set that was complete before this segment wrote
// its file (its own is an earlier attempt's): while the start is at most
// Lead past, the others may still be starting, and this one starts with
// them; after that it would measure another window of time.
func arriveAfterAll(cfg Config, st *state) (time.Time, error) {
	start := st.start(cfg.Lead)
	if late := time.Since(start); late > cfg.Lead {
		return time.Time{}, fmt.Errorf("--barrier %s: all %d segments were ready and started at %s, %v ago: segment %d/%d arrived too late (a restarted process?) and would measure another window of time, so it does not run; for a new run, use a new --barrier directory",
			cfg.Dir, cfg.Count, stamp(start), late.Round(time.Second), cfg.Index, cfg.Count)
	}
	cfg.Log("--barrier %s: all %d segments are ready; the load starts at %s", cfg.Dir, cfg.Count, stamp(start))
	return start, nil
}

// poll reads the directory until every segment is ready, an abort or a
// mismatch appears, deadline passes or ctx ends.
func poll(ctx context.Context, cfg Config, deadline time.Time) (time.Time, error) {
	var logged time.Time
	tick := time.NewTicker(cfg.Poll)
	defer tick.Stop()
	for {
		st, err := scan(cfg)
		if err != nil {
			return time.Time{}, err
		}
		if st.complete(cfg.Count) {
			start := st.start(cfg.Lead)
			cfg.Log("--barrier %s: all %d segments are ready; the load starts at %s", cfg.Dir, cfg.Count, stamp(start))
			return start, nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return time.Time{}, timeout(cfg, st)
		}
		if logged.IsZero() || now.Sub(logged) >= LogEvery {
			cfg.Log("--barrier %s: %d of %d segments ready, waiting for %s", cfg.Dir, len(st.ready), cfg.Count, list(st.missing(cfg.Count)))
			logged = now
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// timeout writes this segment's abort file and says who never came.
func timeout(cfg Config, st *state) error {
	missing := st.missing(cfg.Count)
	verb := "segment " + list(missing) + " was"
	if len(missing) > 1 {
		verb = "segments " + list(missing) + " were"
	}
	why := fmt.Sprintf("%s not ready within %v (ready: %s)", verb, cfg.Timeout, commas(st.readyIndexes()))
	err := fmt.Errorf("--barrier %s: %s", cfg.Dir, why)
	ab := Abort{Index: cfg.Index, Host: cfg.Host, At: time.Now().UTC(), Reason: why}
	if werr := writeJSON(cfg.Dir, abortName(cfg.Index), ab); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// stamp formats an instant for messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
