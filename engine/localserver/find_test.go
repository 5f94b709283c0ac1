package localserver

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// fdLinks are the fake processes' open files: which sockets each holds.
// 1003 is an accepted connection, not a listening socket.
var fdLinks = map[string]string{
	"1/fd/0":   "/dev/null",
	"100/fd/0": "/dev/null",
	"100/fd/3": "anon_inode:[eventpoll]",
	"100/fd/4": "socket:[1001]",
	"100/fd/5": "socket:[1003]",
	"200/fd/6": "socket:[1002]",
	"201/fd/6": "socket:[1002]",
	"202/fd/6": "socket:[1002]",
	"300/fd/7": "socket:[1004]",
	"400/fd/8": "socket:[2001]",
	"401/fd/1": "pipe:[77]",
	"500/fd/3": "socket:[2002]",
	"600/fd/9": "socket:[1005]",
	"700/fd/3": "socket:[1006]",
}

// fakeProc is testdata/proc with the fd links, processes' directories
// and, optionally, an auxiliary vector. Reading pid 700's fds is denied,
// as for another user's process.
func fakeProc(t *testing.T) *denyFS {
	t.Helper()
	m := fstest.MapFS{}
	root := filepath.Join("testdata", "proc")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range fdLinks {
		m[name] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
	}
	return &denyFS{m: m, deny: "700/fd"}
}

// denyFS is a MapFS whose deny directory cannot be opened.
type denyFS struct {
	m    fstest.MapFS
	deny string
}

func (d *denyFS) Open(name string) (fs.File, error) {
	if d.deny != "" && name == d.deny || strings.HasPrefix(name, d.deny+"/") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.m.Open(name)
}

func (d *denyFS) ReadLink(name string) (string, error)   { return d.m.ReadLink(name) }
func (d *denyFS) Lstat(name string) (fs.FileInfo, error) { return d.m.Lstat(name) }

// fakeFinder looks in the fake /proc as pid 600 (an llmload the
// llama-server started) on a machine whose interface has 192.168.1.5.
func fakeFinder(fsys fs.FS) finder {
	hosts := map[string][]netip.Addr{
		"localhost":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
		"gpu-box":     {netip.MustParseAddr("10.0.0.9")},
		"this-host":   {netip.MustParseAddr("192.168.1.5")},
		"mapped-host": {netip.MustParseAddr("::ffff:127.0.0.1")},
	}
	return finder{fsys: fsys, self: 600, order: binary.LittleEndian,
		ifaces: []netip.Addr{netip.MustParseAddr("192.168.1.5")},
		resolve: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			if a, ok := hosts[host]; ok {
				return a, nil
			}
			return nil, errors.New("no such host")
		}}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name        string
		urls        []string
		pids        []int
		note        string // in the note; "" wants none
		allReadable bool   // every process's fds can be read
	}{
		{"tcp, loopback", []string{"http://127.0.0.1:8080/v1"}, []int{100}, "", false},
		{"a name resolving to loopback; workers share a wildcard socket", []string{"http://localhost:9000/v1"}, []int{200, 201, 202}, "", false},
		{"tcp6, a dual-stack wildcard, with children and a grandchild", []string{"https://[::1]:8443/v1"}, []int{400, 401, 402}, "", false},
		{"an IPv4 target reaches a dual-stack socket", []string{"http://127.0.0.1:8443"}, []int{400, 401, 402}, "", false},
		{"a socket bound to an IPv4-mapped address", []string{"http://127.0.0.1:8001"}, []int{500}, "", false},
		{"an IPv4-mapped target", []string{"http://mapped-host:8001"}, []int{500}, "", false},
		{"an interface's address", []string{"http://this-host:7000"}, []int{300}, "", false},
		{"several targets, each process once", []string{"http://127.0.0.1:8080/v1", "http://localhost:9000", "http://127.0.0.1:8080/other", "http://gpu-box:8000"}, []int{100, 200, 201, 202}, "", false},
		{"a remote target: nothing to say", []string{"http://gpu-box:8000/v1"}, nil, "", false},
		{"an unresolvable host: nothing to say", []string{"http://nowhere:8000"}, nil, "", false},
		{"no URL", nil, nil, "", false},
		{"bound to another address of the port", []string{"http://127.0.0.1:7000"}, nil, "no socket listens on 127.0.0.1:7000", false},
		{"the default port", []string{"http://localhost/v1"}, nil, "no socket listens on localhost:80", false},
		{"a closed socket is no listener", []string{"http://127.0.0.1:8082"}, nil, "no socket listens", false},
		{"no owner in this PID namespace", []string{"http://[::1]:8002"}, nil, "no process of this PID namespace", true},
		{"no owner seen, one process unreadable", []string{"http://[::1]:8002"}, nil, "could not be read", false},
		{"another user's process", []string{"http://127.0.0.1:8081"}, nil, "could not be read", false},
		{"the target is llmload itself", []string{"http://127.0.0.1:8500"}, nil, "llmload's own process", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := fakeProc(t)
			if tt.allReadable {
				proc.deny = ""
			}
			s, note := fakeFinder(proc).find(context.Background(), tt.urls)
			var pids []int
			for _, p := range s.Processes() {
				pids = append(pids, p.PID)
			}
			if !slices.Equal(pids, tt.pids) {
				t.Errorf("pids %v, want %v (note %q)", pids, tt.pids, note)
			}
			if (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want %q", note, tt.note)
			}
			if strings.Count(note, "\n") > 0 {
				t.Errorf("note %q is more than one line", note)
			}
		})
	}
}

func TestFindWithoutProcNet(t *testing.T) {
	s, note := fakeFinder(fstest.MapFS{}).find(context.Background(), []string{"http://127.0.0.1:8080"})
	if s != nil || !strings.Contains(note, "no /proc/net/tcp") {
		t.Errorf("find = %v, %q; want nothing, and why", s, note)
	}
}

func TestFoundNames(t *testing.T) {
	s, _ := fakeFinder(fakeProc(t)).find(context.Background(), []string{"http://localhost:9000", "http://127.0.0.1:8443"})
	if got, want := s.String(), "nginx pids 200, 201, 202; python3 pid 400; VLLM::EngineCor pid 401; pt_main (x) y pid 402"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestSetCPU follows the processes' CPU as the fake /proc changes under
// them: a process that exits, or whose pid is reused, keeps what it used.
func TestSetCPU(t *testing.T) {
	proc := fakeProc(t)
	s, _ := fakeFinder(proc).find(context.Background(), []string{"http://localhost:9000"})
	// nginx 200, 201, 202: 50 + 500 + 400 ticks of 10 ms (no auxv: USER_HZ).
	steps := []struct {
		name   string
		change func()
		want   time.Duration
	}{
		{"as found", func() {}, 9500 * time.Millisecond},
		{"a worker works", func() { setTicks(proc, 201, "nginx", 200, 900, 100, 5010) }, 14500 * time.Millisecond},
		{"a worker exits: its CPU stays", func() { delete(proc.m, "202/stat") }, 14500 * time.Millisecond},
		{"its pid comes back for another process: not counted", func() { setTicks(proc, 202, "bash", 1, 9000, 0, 9999) }, 14500 * time.Millisecond},
		{"a stat that does not parse counts as exited", func() { proc.m["201/stat"] = &fstest.MapFile{Data: []byte("201 (nginx")} }, 14500 * time.Millisecond},
	}
	for _, st := range steps {
		st.change()
		got, ok := s.CPU()
		if !ok || got != st.want {
			t.Errorf("%s: CPU = %v, %v; want %v", st.name, got, ok, st.want)
		}
	}
	if got := len(s.Processes()); got != 3 {
		t.Errorf("%d processes listed, want the 3 found, exited ones included", got)
	}
	var none *Set
	if _, ok := none.CPU(); ok {
		t.Error("a nil Set reads CPU")
	}
}

func setTicks(proc *denyFS, pid int, name string, ppid int, utime, stime, start uint64) {
	line := stat(pid, name, ppid, utime, stime, start)
	proc.m[itoa(pid)+"/stat"] = &fstest.MapFile{Data: []byte(line)}
}

// TestFamily orders the owners first and then each generation below
// them, whatever their pids: after a wrap, a worker's pid is smaller than
// its server's.
func TestFamily(t *testing.T) {
	tests := []struct {
		name   string
		parent map[int]int // pid: its parent
		owners []int
		self   int
		want   []int
	}{
		{"a server and its worker", map[int]int{100: 1, 101: 100}, []int{100}, 999, []int{100, 101}},
		{"the worker's pid wrapped", map[int]int{32767: 1, 305: 32767}, []int{32767}, 999, []int{32767, 305}},
		{"generations, each in pid order", map[int]int{900: 1, 50: 900, 40: 900, 30: 50, 950: 40}, []int{900}, 999, []int{900, 40, 50, 30, 950}},
		{"workers sharing the socket come with the owners", map[int]int{200: 1, 202: 200, 201: 200, 10: 201}, []int{200, 201, 202}, 999, []int{200, 201, 202, 10}},
		{"llmload and what it started are left out", map[int]int{100: 1, 7: 100, 8: 7, 101: 100}, []int{100}, 7, []int{100, 101}},
		{"no owner", map[int]int{100: 1}, nil, 999, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scan{parent: tt.parent, owners: tt.owners}
			if got := s.family(tt.self); !slices.Equal(got, tt.want) {
				t.Errorf("family = %v, want %v", got, tt.want)
			}
		})
	}
}
