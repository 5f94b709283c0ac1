//go:build !unix

package selfcheck

// ReadUsage is not measured on this platform.
func ReadUsage() (Usage, bool) { return Usage{}, false }
