package localserver

import (
	"cmp"
	"context"
	"net"
	"net/netip"
	"net/url"
	"strconv"
)

// endpoint is where a base URL's requests go: the addresses its host
// resolves to and the port.
type endpoint struct {
	hostPort string // host:port as the URL names it, for messages (no userinfo)
	addrs    []netip.Addr
	port     uint16
}

// resolver looks a host name up; net.DefaultResolver.LookupNetIP in use.
type resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// parseEndpoint reads a base URL's host and port (the scheme's default
// when it names none) and resolves the host; ok is false when the URL has
// no host, or the host does not resolve.
func parseEndpoint(ctx context.Context, baseURL string, resolve resolver) (endpoint, bool) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return endpoint{}, false
	}
	port, err := strconv.ParseUint(cmp.Or(u.Port(), defaultPort(u.Scheme)), 10, 16)
	if err != nil || port == 0 {
		return endpoint{}, false
	}
	ep := endpoint{hostPort: net.JoinHostPort(u.Hostname(), strconv.FormatUint(port, 10)), port: uint16(port)}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		ep.addrs = []netip.Addr{a.Unmap()}
		return ep, true
	}
	addrs, err := resolve(ctx, u.Hostname())
	if err != nil || len(addrs) == 0 {
		return endpoint{}, false
	}
	for _, a := range addrs {
		ep.addrs = append(ep.addrs, a.Unmap())
	}
	return ep, true
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// isLocal reports whether one of the endpoint's addresses is this
// machine's: loopback, unspecified (a connection to 0.0.0.0 reaches this
// machine) or one of its interfaces' addresses.
func (ep endpoint) isLocal(ifaces []netip.Addr) bool {
	for _, a := range ep.addrs {
		if a.IsLoopback() || a.IsUnspecified() {
			return true
		}
		for _, i := range ifaces {
			if a == i {
				return true
			}
		}
	}
	return false
}

// interfaceAddrs are the machine's own addresses; none when they cannot
// be listed (loopback is still recognised by isLocal).
func interfaceAddrs() []netip.Addr {
	list, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range list {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// serves reports whether a listening socket bound to addr:port accepts
// the endpoint's connections: same port, and the same address or a
// wildcard. "::" takes IPv4 connections too, as on a dual-stack socket
// (/proc/net does not show IPV6_V6ONLY); "0.0.0.0" takes only IPv4. An
// endpoint at 0.0.0.0 or :: reaches any local listener of its port.
func (ep endpoint) serves(addr netip.Addr, port uint16) bool {
	if port != ep.port {
		return false
	}
	addr = addr.Unmap()
	for _, a := range ep.addrs {
		switch {
		case a == addr, a.IsUnspecified():
			return true
		case addr.IsUnspecified() && (addr.Is6() || a.Is4()):
			return true
		}
	}
	return false
}
