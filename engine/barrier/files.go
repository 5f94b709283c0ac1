package barrier

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// Ready is the content of DIR/ready-i: segment i is ready to start.
type Ready struct {
	Index     int         `json:"index"`
	Count     int         `json:"count"`
	ReadyAt   time.Time   `json:"ready_at"` // RFC 3339 with nanoseconds, UTC
	Plan      string      `json:"plan"`     // the plan's fingerprint
	PlanParts *plan.Parts `json:"plan_parts,omitempty"`
	Host      string      `json:"host,omitempty"`
}

// Abort is the content of DIR/abort-i: segment i gave up the barrier, and
// the others (and llmload merge --barrier) stop waiting for it.
type Abort struct {
	Index  int       `json:"index"`
	Host   string    `json:"host,omitempty"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

func readyName(i int) string { return "ready-" + strconv.Itoa(i) }
func abortName(i int) string { return "abort-" + strconv.Itoa(i) }

// fileIndex reads "ready-3" as ("ready", 3); other names (temporary
// files, anything else in the directory) give ok false.
func fileIndex(name string) (kind string, i int, ok bool) {
	kind, num, found := strings.Cut(name, "-")
	if !found || (kind != "ready" && kind != "abort") {
		return "", 0, false
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 || strconv.Itoa(i) != num {
		return "", 0, false
	}
	return kind, i, true
}

// ensureDir creates the barrier directory when it is missing.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--barrier %s: %v", dir, err)
	}
	return nil
}

// writeJSON writes v as DIR/name atomically: a reader sees the whole file
// or none, also on a shared file system, and it survives a crash.
func writeJSON(dir, name string, v any) error {
	fail := func(err error) error {
		return fmt.Errorf("--barrier %s: writing %s: %v", dir, name, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*.tmp")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fail(err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable where the platform allows; a failure
// only weakens durability, never what readers see.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// state is what one read of the directory found.
type state struct {
	ready map[int]Ready
}

// scan reads every ready and abort file, and fails on an abort or on a
// ready file that does not belong with this segment.
func scan(cfg Config) (*state, error) {
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("--barrier %s: %v", cfg.Dir, err)
	}
	st := &state{ready: map[int]Ready{}}
	for _, e := range entries {
		kind, i, ok := fileIndex(e.Name())
		if !ok {
			continue
		}
		if kind == "abort" {
			return nil, abortError(cfg.Dir, i)
		}
		r, err := readReady(cfg.Dir, e.Name())
		if err != nil {
			return nil, err
		}
		if err := check(cfg, i, r); err != nil {
			return nil, err
		}
		st.ready[i] = r
	}
	return st, nil
}

// abortError says that segment i gave up, and why.
func abortError(dir string, i int) error {
	ab, err := readAbort(dir, abortName(i))
	if err != nil {
		return err
	}
	return fmt.Errorf("--barrier %s: segment %d%s gave up: %s", dir, i, onHost(ab.Host), ab.Reason)
}

func onHost(host string) string {
	if host == "" {
		return ""
	}
	return " (on " + host + ")"
}

// check refuses a ready file of another plan, segment count or index.
func check(cfg Config, i int, r Ready) error {
	name := filepath.Join(cfg.Dir, readyName(i))
	switch {
	case r.Count != cfg.Count:
		return fmt.Errorf("%s: segment %d%s is one of %d segments, this one (%d/%d) of %d: they are not segments of one run",
			name, i, onHost(r.Host), r.Count, cfg.Index, cfg.Count, cfg.Count)
	case r.Index != i || i >= cfg.Count:
		return fmt.Errorf("%s: says index %d of %d: not a ready file of this run's %d segments", name, r.Index, r.Count, cfg.Count)
	case r.Plan != cfg.Fingerprint:
		return fmt.Errorf("%s: segment %d%s and this segment (%d/%d) differ in %s", name, i, onHost(r.Host), cfg.Index, cfg.Count, planDiff(r, cfg))
	}
	return nil
}

// planDiff names what differs between a ready file's plan and this one's.
func planDiff(r Ready, cfg Config) string {
	if r.PlanParts != nil && cfg.Parts != nil {
		if d := plan.Diff(*r.PlanParts, *cfg.Parts); d != "" {
			return d
		}
	}
	return fmt.Sprintf("the plan fingerprint (%s and %s)", r.Plan, cfg.Fingerprint)
}

func readReady(dir, name string) (Ready, error) {
	var r Ready
	err := readJSON(dir, name, &r)
	return r, err
}

func readAbort(dir, name string) (Abort, error) {
	var a Abort
	err := readJSON(dir, name, &a)
	return a, err
}

func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
	}
	return nil
}

// complete reports whether all n segments are ready.
func (s *state) complete(n int) bool { return len(s.ready) == n }

// start is the instant every segment computes from the same files.
func (s *state) start(lead time.Duration) time.Time {
	var last time.Time
	for _, r := range s.ready {
		if r.ReadyAt.After(last) {
			last = r.ReadyAt
		}
	}
	return roundUp(last.Add(lead), Round)
}

// roundUp rounds t up to a whole multiple of d since the Unix epoch.
func roundUp(t time.Time, d time.Duration) time.Time {
	t = t.UTC()
	r := t.Truncate(d)
	if r.Before(t) {
		r = r.Add(d)
	}
	return r
}

func (s *state) readyIndexes() []int {
	out := make([]int, 0, len(s.ready))
	for i := range s.ready {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (s *state) missing(n int) []int {
	var out []int
	for i := range n {
		if _, ok := s.ready[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// list is "none", "2", "2 and 3" or "1, 2 and 3".
func list(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	return plan.JoinAnd(itoas(ids))
}

// commas is "none", "2" or "0, 1".
func commas(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(itoas(ids), ", ")
}

func itoas(ids []int) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return s
}

// Aborted returns the abort files in dir, by index; none when dir is
// missing. llmload merge --barrier reads it to stop waiting for a segment
// that gave up.
func Aborted(dir string) ([]Abort, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--barrier %s: %v", dir, err)
	}
	var out []Abort
	for _, e := range entries {
		if kind, _, ok := fileIndex(e.Name()); ok && kind == "abort" {
			ab, err := readAbort(dir, e.Name())
			if err != nil {
				return nil, err
			}
			out = append(out, ab)
		}
	}
	slices.SortFunc(out, func(a, b Abort) int { return a.Index - b.Index })
	return out, nil
}
