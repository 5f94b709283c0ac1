//go:build !linux

package h1

import "net"

// canPeek says pending cannot look on this platform.
const canPeek = false

// alive cannot look on this platform: a connection the server closed while
// idle shows when the request is written, and is resent by RoundTrip's
// rule.
func alive(net.Conn) bool { return true }

// pending cannot look on this platform.
func pending(net.Conn) bool { return false }
