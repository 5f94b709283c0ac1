package localserver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
)

// listener is one listening TCP socket of llmload's network namespace,
// as /proc/net/tcp and /proc/net/tcp6 list it.
type listener struct {
	addr  netip.Addr
	port  uint16
	inode uint64
}

// tcpListen is the socket state TCP_LISTEN, in /proc/net/tcp's hex.
const tcpListen = "0A"

// parseListeners reads the listening sockets of a /proc/net/tcp or tcp6
// table. The kernel prints each 32-bit word of an address as a number in
// the host's byte order, so order is the byte order of the machine the
// table comes from (binary.NativeEndian for this one's).
func parseListeners(data []byte, order binary.ByteOrder) []listener {
	var out []listener
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, port, ok := parseHexAddr(f[1], order)
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if !ok || err != nil || inode == 0 {
			continue
		}
		out = append(out, listener{addr: addr, port: port, inode: inode})
	}
	return out
}

// parseHexAddr reads "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): each group of 8 digits is one 32-bit word in the given order.
func parseHexAddr(s string, order binary.ByteOrder) (netip.Addr, uint16, bool) {
	host, portHex, ok := strings.Cut(s, ":")
	if !ok || (len(host) != 8 && len(host) != 32) {
		return netip.Addr{}, 0, false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return netip.Addr{}, 0, false
	}
	raw := make([]byte, len(host)/2)
	for i := 0; i < len(host); i += 8 {
		word, err := hex.DecodeString(host[i : i+8])
		if err != nil {
			return netip.Addr{}, 0, false
		}
		order.PutUint32(raw[i/2:], binary.BigEndian.Uint32(word))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return addr, uint16(port), true
}
