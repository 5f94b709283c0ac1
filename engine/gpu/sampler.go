// Package gpu samples the GPUs of llmload's own machine with nvidia-smi,
// for a target served beside it (--gpu nvidia-smi), into the same series
// as NVIDIA's DCGM exporter gives (engine/servermetrics): utilisation,
// power and framebuffer memory per device. nvidia-smi has no energy
// field, so a stage's energy is then the integral of its power.
//
// A sampler never disturbs the load: an absent binary, a failing one,
// fields the device does not support ("[N/A]", "[Not Supported]") and
// unreadable lines are counted in the Result's errors and explained in
// its note, never returned and never read as zeros.
package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine/servermetrics"
)

// Query is the nvidia-smi --query-gpu field list: index, uuid and name
// identify the device, then utilization.gpu (%), power.draw (W),
// memory.used and memory.total (MiB), with --format=csv,noheader,nounits.
const Query = "index,uuid,name,utilization.gpu,power.draw,memory.used,memory.total"

// Binary is the executable Start runs when given none, found on PATH.
const Binary = "nvidia-smi"

// Timeout bounds one run of nvidia-smi.
const Timeout = 5 * time.Second

// Sampler runs nvidia-smi every interval from Start until Stop, in one
// goroutine of its own. Stop is safe to call more than once and from any
// goroutine.
type Sampler struct {
	binary string
	every  time.Duration
	start  time.Time
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	ctx    context.Context // ended by Stop, so that a hung nvidia-smi does not hold it up
	cancel context.CancelFunc

	// Owned by the goroutine until done is closed.
	res   servermetrics.Result
	at    map[string]int // role and device → index in res.Series
	notes notes
}

// Start samples with binary (Binary, from PATH, when "") at once and then
// every interval (servermetrics.DefaultEvery when every ≤ 0, at least
// servermetrics.MinEvery); series' times are seconds since start.
func Start(binary string, every time.Duration, start time.Time) *Sampler {
	switch {
	case every <= 0:
		every = servermetrics.DefaultEvery
	case every < servermetrics.MinEvery:
		every = servermetrics.MinEvery
	}
	if binary == "" {
		binary = Binary
	}
	s := &Sampler{binary: binary, every: every, start: start, stop: make(chan struct{}), done: make(chan struct{}),
		at: map[string]int{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.res = servermetrics.Result{URL: Binary, Server: servermetrics.ServerNvidiaSMI, EveryS: every.Seconds(), Series: []servermetrics.Series{}}
	go s.run()
	return s
}

// Stop ends the sampling and returns what was seen. A nil Sampler
// returns nil.
func (s *Sampler) Stop() *servermetrics.Result {
	if s == nil {
		return nil
	}
	s.once.Do(func() { close(s.stop); s.cancel() })
	<-s.done
	return &s.res
}

func (s *Sampler) run() {
	defer close(s.done)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for ok := s.sample(); ok; ok = s.sample() {
		select {
		case <-tick.C:
		case <-s.stop:
			s.finish()
			return
		}
	}
	s.finish() // no binary: sampling again would fail the same way
	<-s.stop
}

// finish writes the notes into the Result.
func (s *Sampler) finish() {
	s.res.Errors = s.notes.lines()
	s.res.Note = s.explain()
}

// sample runs nvidia-smi once and records its rows; false when the binary
// cannot be run at all.
func (s *Sampler) sample() bool {
	s.res.Scrapes++
	t := time.Since(s.start).Seconds()
	out, err := s.query()
	var notRun *exec.Error
	switch {
	case s.ctx.Err() != nil: // stopped mid-sample: not a sample
		s.res.Scrapes--
		return true
	case errors.As(err, &notRun) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		s.res.Failures++
		s.notes.add(fmt.Sprintf("%s cannot be run: %v", s.binary, cause(err)))
		return false
	case err != nil:
		s.res.Failures++
		s.notes.add(err.Error())
		return true
	}
	rows := 0
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if s.row(t, line) {
			rows++
		}
	}
	if rows == 0 {
		s.res.Failures++
		if len(bytes.TrimSpace(out)) == 0 {
			s.notes.add("nvidia-smi printed no GPU")
		}
	}
	return true
}

// query runs nvidia-smi; a non-zero exit is an error that quotes the
// first line it printed (its reason: no driver, a GPU fallen off the bus).
func (s *Sampler) query() ([]byte, error) {
	ctx, cancel := context.WithTimeout(s.ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.binary, "--query-gpu="+Query, "--format=csv,noheader,nounits")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("nvidia-smi took longer than %v", Timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		why := firstLine(stderr.String())
		if why == "" {
			why = firstLine(string(out))
		}
		return nil, fmt.Errorf("nvidia-smi exited with status %d: %s", exit.ExitCode(), why)
	}
	return out, err
}

// cause is the innermost error, without the path and verb of exec's
// wrappers.
func cause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// firstLine is the first non-empty line of s, cut short.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = strings.ToValidUTF8(line[:200], "") + "…"
			}
			return line
		}
	}
	return ""
}

// explain says in one sentence why there are no series, or which
// readings were missing; "" when nothing needs saying.
func (s *Sampler) explain() string {
	switch {
	case s.res.Scrapes == 0 || len(s.res.Errors) == 0:
		return ""
	case len(s.res.Series) == 0:
		return fmt.Sprintf("--gpu nvidia-smi gave no GPU readings in %d samples: %s", s.res.Scrapes, s.res.Errors[0])
	}
	return "--gpu nvidia-smi: readings missing: " + strings.Join(s.res.Errors, "; ")
}
