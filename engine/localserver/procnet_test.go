package localserver

import (
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseListeners(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", "proc", "net", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	l := func(addr string, port uint16, inode uint64) listener {
		return listener{addr: netip.MustParseAddr(addr), port: port, inode: inode}
	}
	tests := []struct {
		name  string
		data  []byte
		order binary.ByteOrder
		want  []listener
	}{
		{"tcp: listening sockets only", read("tcp"), binary.LittleEndian,
			[]listener{l("127.0.0.1", 8080, 1001), l("0.0.0.0", 9000, 1002), l("192.168.1.5", 7000, 1004), l("127.0.0.1", 8500, 1005), l("127.0.0.1", 8081, 1006)}},
		{"tcp6, an IPv4-mapped address among them", read("tcp6"), binary.LittleEndian,
			[]listener{l("::", 8443, 2001), l("::ffff:127.0.0.1", 8001, 2002), l("::1", 8002, 2003)}},
		{"a big-endian machine's table", []byte("  0: 7F000001:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 55 1\n"), binary.BigEndian,
			[]listener{l("127.0.0.1", 8080, 55)}},
		{"garbage", []byte("  0: ZZ:1F90 00000000:0000 0A 0 0 0 0 0 55\n  1: 0100007F:1F90 x 0A 0 0 0 0 0 nope\n"), binary.LittleEndian, nil},
	}
	for _, tt := range tests {
		if got := parseListeners(tt.data, tt.order); !slices.Equal(got, tt.want) {
			t.Errorf("%s: parseListeners = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	noDNS := func(context.Context, string) ([]netip.Addr, error) { return nil, os.ErrNotExist }
	ifaces := []netip.Addr{netip.MustParseAddr("192.168.1.5")}
	tests := []struct {
		url      string
		ok       bool
		hostPort string
		local    bool
	}{
		{"http://127.0.0.1:8080/v1", true, "127.0.0.1:8080", true},
		{"https://127.0.0.2/v1", true, "127.0.0.2:443", true},
		{"http://[::1]/v1", true, "[::1]:80", true},
		{"http://[::ffff:127.0.0.1]:9/v1", true, "[::ffff:127.0.0.1]:9", true},
		{"http://0.0.0.0:8000", true, "0.0.0.0:8000", true},
		{"http://192.168.1.5:8000", true, "192.168.1.5:8000", true},
		{"http://user:secret@10.1.2.3:8000/v1?key=k", true, "10.1.2.3:8000", false},
		{"http://unknown-host:8000", false, "", false},
		{"http://127.0.0.1:99999", false, "", false},
		{"not a url", false, "", false},
	}
	for _, tt := range tests {
		ep, ok := parseEndpoint(context.Background(), tt.url, noDNS)
		if ok != tt.ok || ep.hostPort != tt.hostPort || (ok && ep.isLocal(ifaces) != tt.local) {
			t.Errorf("%s: endpoint %+v, %v (local %v); want %q, %v, local %v", tt.url, ep, ok, ep.isLocal(ifaces), tt.hostPort, tt.ok, tt.local)
		}
	}
}

func TestServes(t *testing.T) {
	ep := func(addr string) endpoint { return endpoint{addrs: []netip.Addr{netip.MustParseAddr(addr)}, port: 80} }
	tests := []struct {
		target, bound string
		port          uint16
		want          bool
	}{
		{"127.0.0.1", "127.0.0.1", 80, true},
		{"127.0.0.1", "127.0.0.1", 81, false},
		{"127.0.0.1", "127.0.0.2", 80, false},
		{"127.0.0.1", "0.0.0.0", 80, true},
		{"127.0.0.1", "::", 80, true},
		{"127.0.0.1", "::ffff:127.0.0.1", 80, true},
		{"::1", "0.0.0.0", 80, false},
		{"::1", "::", 80, true},
		{"0.0.0.0", "127.0.0.1", 80, true},
	}
	for _, tt := range tests {
		if got := ep(tt.target).serves(netip.MustParseAddr(tt.bound), tt.port); got != tt.want {
			t.Errorf("%s served by a socket on %s:%d: %v, want %v", tt.target, tt.bound, tt.port, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		procs []Process
		want  string
	}{
		{nil, ""},
		{[]Process{{1234, "llama-server"}}, "llama-server pid 1234"},
		{[]Process{{10, "nginx"}, {11, "nginx"}, {12, "python3"}}, "nginx pids 10, 11; python3 pid 12"},
	}
	for _, tt := range tests {
		if got := Describe(tt.procs); got != tt.want {
			t.Errorf("Describe(%v) = %q, want %q", tt.procs, got, tt.want)
		}
	}
}
