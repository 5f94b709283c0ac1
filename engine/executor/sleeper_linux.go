package executor

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// newPrecise returns how a sleeper finishes its short waits, and how to
// release it: a timerfd of its own, which the goroutine waits on in the
// runtime's poller, so no thread is held in a syscall and the wake-up is
// as precise as the kernel's timer (the poller's own timeouts are whole
// milliseconds). Where a timerfd cannot be had it is nanosleep, which holds
// the thread. It is a variable so tests can swap in time.Sleep, which a
// testing/synctest bubble fakes.
var newPrecise = func() (sleep func(time.Duration), release func()) {
	t, err := openTimerFD()
	if err != nil {
		return nanosleep, func() {}
	}
	return t.sleep, t.close
}

// timerFD is a one-shot monotonic timer read through the poller. Used by
// one goroutine.
type timerFD struct {
	fd  int
	f   *os.File
	buf [8]byte
}

func openTimerFD() (*timerFD, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// A non-blocking descriptor: os.NewFile registers it with the poller.
	return &timerFD{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// sleep returns once d has passed.
func (t *timerFD) sleep(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		nanosleep(d)
		return
	}
	if _, err := t.f.Read(t.buf[:]); err != nil {
		nanosleep(d) // not expected; keep the wait whole
	}
}

func (t *timerFD) close() { _ = t.f.Close() }

// nanosleep blocks the calling thread in nanosleep, which wakes within
// tens of microseconds; callers keep d short (see preciseWindow).
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	// An EINTR wakes early; the caller's loop sleeps the rest.
	_ = syscall.Nanosleep(&ts, nil)
}
