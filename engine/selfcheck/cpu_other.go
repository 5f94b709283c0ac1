//go:build !unix

package selfcheck

import "time"

// processCPU is not measured on this platform.
func processCPU() (time.Duration, bool) { return 0, false }

// ReadUsage is not measured on this platform.
func ReadUsage() (Usage, bool) { return Usage{}, false }
