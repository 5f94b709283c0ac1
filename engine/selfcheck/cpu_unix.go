//go:build unix

package selfcheck

import (
	"runtime"
	"syscall"
	"time"
)

// ReadUsage reads what the process has used so far; ok is false where
// the platform does not say.
func ReadUsage() (u Usage, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, false
	}
	u = Usage{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano()), MaxRSS: ru.Maxrss}
	if runtime.GOOS != "darwin" {
		u.MaxRSS *= 1024 // kilobytes everywhere but macOS
	}
	return u, true
}
