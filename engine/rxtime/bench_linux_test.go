//go:build linux

package rxtime

import (
	"io"
	"net"
	"testing"
)

// BenchmarkRead is the kernel's share of stamping: one 100-byte chunk
// read whole, through a plain read(2) and through recvmsg(2) with the
// receive time, each the answer to a 1-byte ping on loopback, so that
// every chunk arrives alone as a stream's token does. The ping and the
// peer's write are in both; their difference is what the receive time
// costs a read. One op is one chunk.
func BenchmarkRead(b *testing.B) {
	for _, tc := range []struct {
		name  string
		plain bool
	}{{"read", true}, {"recvmsg+stamp", false}} {
		b.Run(tc.name, func(b *testing.B) {
			c := stamped(b, func(s net.Conn) {
				ping, chunk := make([]byte, 1), make([]byte, 100)
				for {
					if _, err := io.ReadFull(s, ping); err != nil {
						return
					}
					if _, err := s.Write(chunk); err != nil {
						return
					}
				}
			})
			var r io.Reader = c
			if tc.plain {
				r = c.TCPConn
			}
			ping, buf := []byte{1}, make([]byte, 2048)
			b.SetBytes(100)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(ping); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(r, buf[:100]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
