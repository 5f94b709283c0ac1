package selfcheck

import "time"

// Usage is the CPU and memory the process has used since it started.
type Usage struct {
	User, System time.Duration
	MaxRSS       int64 // peak resident set, bytes
}

// CPU is user plus system time.
func (u Usage) CPU() time.Duration { return u.User + u.System }

// processCPU is the user plus system CPU time this process has used.
func processCPU() (time.Duration, bool) {
	u, ok := ReadUsage()
	return u.CPU(), ok
}
