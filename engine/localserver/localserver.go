// Package localserver finds the processes of a target that listens on
// this machine, so that llmload's self-check can count their CPU apart
// from other processes': the server's work is what a run measures, not a
// disturbance of it. On Linux a base URL whose host is this machine's
// (loopback, or an address of one of its interfaces) is looked up once:
// the listening sockets of its port in /proc/net/tcp and tcp6, the
// processes holding one of them open (/proc/[pid]/fd), and their
// descendants. A server with workers sharing one socket is all of them; a
// target behind a local proxy is the proxy's processes only, since the
// proxy holds the socket. Anything else — no /proc, another user's
// process without root, a server in another network namespace — is "not
// found", with one line saying why.
package localserver

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"
)

// lookupTimeout bounds the resolution of a base URL's host name, done
// once before the load starts.
const lookupTimeout = 2 * time.Second

// Process is one process of a local server: never its command line,
// which may hold an API key.
type Process struct {
	PID  int
	Name string // the executable's name (/proc/[pid]/comm)
}

// Set is the processes found and the CPU they have used. Not safe for
// concurrent use: one goroutine samples it.
type Set struct {
	fsys  fs.FS
	tick  time.Duration
	procs []*tracked
}

type tracked struct {
	Process
	start uint64 // starttime: a new process under a reused pid is not this one
	ticks uint64 // CPU ticks at the last reading
	gone  bool   // exited: its last reading stands
}

// Find looks for the processes serving baseURLs on this machine, once.
// Base URLs on other machines are left out silently; s is nil when no
// process was found, and note then says why in one line when a base URL
// was this machine's ("" when none was). The processes of several base
// URLs are one set, each process once.
func Find(ctx context.Context, baseURLs []string) (s *Set, note string) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	f := finder{fsys: os.DirFS("/proc"), self: os.Getpid(), order: binary.NativeEndian,
		ifaces: interfaceAddrs(), resolve: net.DefaultResolver.LookupNetIP}
	return f.find(ctx, baseURLs)
}

// finder is Find with its sources, replaced in tests.
type finder struct {
	fsys    fs.FS // a /proc
	self    int   // llmload's pid, never counted as the server
	order   binary.ByteOrder
	ifaces  []netip.Addr
	resolve func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func (f finder) find(ctx context.Context, baseURLs []string) (*Set, string) {
	local := f.localEndpoints(ctx, baseURLs)
	if len(local) == 0 {
		return nil, ""
	}
	listeners, err := f.listeners()
	if err != nil {
		return nil, "not found: " + err.Error()
	}
	inodes := map[uint64]bool{}
	var unheard []string
	for _, ep := range local {
		n := len(inodes)
		for _, l := range listeners {
			if ep.serves(l.addr, l.port) {
				inodes[l.inode] = true
			}
		}
		if len(inodes) == n {
			unheard = append(unheard, ep.hostPort)
		}
	}
	if len(inodes) == 0 {
		return nil, fmt.Sprintf("not found: no socket listens on %s in llmload's network namespace (a server in a container or another namespace is not seen)", strings.Join(unheard, ", "))
	}
	return f.owned(inodes)
}

// localEndpoints are the base URLs whose host is this machine, each once.
func (f finder) localEndpoints(ctx context.Context, baseURLs []string) []endpoint {
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) { return f.resolve(ctx, "ip", host) }
	var out []endpoint
	for _, u := range baseURLs {
		ep, ok := parseEndpoint(ctx, u, resolve)
		if !ok || !ep.isLocal(f.ifaces) || slices.ContainsFunc(out, func(o endpoint) bool { return o.hostPort == ep.hostPort }) {
			continue
		}
		out = append(out, ep)
	}
	return out
}

// listeners reads both of /proc/net's TCP tables; an error only when
// neither can be read.
func (f finder) listeners() ([]listener, error) {
	var out []listener
	read := 0
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		data, err := fs.ReadFile(f.fsys, name)
		if err != nil {
			continue
		}
		read++
		out = append(out, parseListeners(data, f.order)...)
	}
	if read == 0 {
		return nil, fmt.Errorf("no /proc/net/tcp to read the listening sockets from")
	}
	return out, nil
}

// owned is the set of the processes holding one of the sockets, and
// their descendants.
func (f finder) owned(inodes map[uint64]bool) (*Set, string) {
	sc := scanProcs(f.fsys, inodes)
	if len(sc.owners) == 1 && sc.owners[0] == f.self {
		return nil, "not found: the target is llmload's own process"
	}
	s := &Set{fsys: f.fsys, tick: clockTick(f.fsys)}
	for _, pid := range sc.family(f.self) {
		if st, ok := readStat(f.fsys, pid); ok {
			s.procs = append(s.procs, &tracked{Process: Process{PID: pid, Name: st.name}, start: st.start, ticks: st.ticks})
		}
	}
	if len(s.procs) > 0 {
		return s, ""
	}
	if sc.denied {
		return nil, "not found: the listening socket's owner could not be read (another user's process: run as that user or as root)"
	}
	return nil, "not found: no process of this PID namespace holds the listening socket"
}

// Processes are the processes found, the listeners first and then their
// descendants by generation (see family), those that have
// exited since included.
func (s *Set) Processes() []Process {
	if s == nil {
		return nil
	}
	out := make([]Process, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.Process
	}
	return out
}

// CPU is the user plus system CPU time the processes have used since
// they started. A process that has exited, or whose pid now belongs to
// another process, keeps what it used when last read, so the sum never
// goes back. ok is false for a nil Set.
func (s *Set) CPU() (time.Duration, bool) {
	if s == nil || len(s.procs) == 0 {
		return 0, false
	}
	var ticks uint64
	for _, p := range s.procs {
		s.refresh(p)
		ticks += p.ticks
	}
	return time.Duration(ticks) * s.tick, true
}

// refresh reads p's CPU again, unless it is gone.
func (s *Set) refresh(p *tracked) {
	if p.gone {
		return
	}
	st, ok := readStat(s.fsys, p.PID)
	if !ok || st.start != p.start {
		p.gone = true
		return
	}
	p.ticks = max(p.ticks, st.ticks)
}

// String names the processes as Describe does.
func (s *Set) String() string { return Describe(s.Processes()) }

// Describe names processes as a report does, grouped by name in the
// order given: "llama-server pid 1234", "nginx pids 10, 11; python3 pid
// 12"; "" for none.
func Describe(procs []Process) string {
	if len(procs) == 0 {
		return ""
	}
	byName := map[string][]string{}
	var names []string
	for _, p := range procs {
		if _, ok := byName[p.Name]; !ok {
			names = append(names, p.Name)
		}
		byName[p.Name] = append(byName[p.Name], fmt.Sprint(p.PID))
	}
	parts := make([]string, len(names))
	for i, n := range names {
		pids := byName[n]
		word := "pid"
		if len(pids) > 1 {
			word = "pids"
		}
		parts[i] = n + " " + word + " " + strings.Join(pids, ", ")
	}
	return strings.Join(parts, "; ")
}
