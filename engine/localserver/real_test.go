//go:build linux

package localserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roleEnv makes the test binary a server (listens, starts a busy worker,
// prints its ports and the worker's pid) or that worker (spins a core).
const roleEnv = "LOCALSERVER_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "server":
		serve()
	case "worker":
		for x := 0; ; x++ { // a busy server's work
			_ = x
		}
	}
	os.Exit(m.Run())
}

// serve listens on loopback in IPv4 and, where it can, IPv6, starts a
// worker, says "ports P4 P6 worker PID" and waits to be killed.
func serve() {
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	p6 := 0
	if l6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		p6 = l6.Addr().(*net.TCPAddr).Port
	}
	worker := exec.Command(os.Args[0])
	worker.Env = append(os.Environ(), roleEnv+"=worker")
	if err := worker.Start(); err != nil {
		panic(err)
	}
	fmt.Printf("ports %d %d worker %d\n", l4.Addr().(*net.TCPAddr).Port, p6, worker.Process.Pid)
	worker.Wait() // reaped when killed, so that its /proc entry goes
	for {
		time.Sleep(time.Hour) // until the test kills the group
	}
}

// started is the server the test runs in its own process group, killed
// with its worker at the end.
type started struct {
	pid, worker int
	p4, p6      int
}

func startServer(t *testing.T) started {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=server")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test made: server and worker
		cmd.Wait()
	})
	s := started{pid: cmd.Process.Pid}
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, err2 := fmt.Sscanf(line, "ports %d %d worker %d", &s.p4, &s.p6, &s.worker); err != nil || err2 != nil {
		t.Fatalf("the server said %q (%v, %v)", line, err, err2)
	}
	return s
}

// TestFindsARealServer finds a child process listening on loopback, and
// the busy worker it started, from the real /proc; follows their CPU, and
// keeps it when the worker exits.
func TestFindsARealServer(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp")
	}
	srv := startServer(t)
	urls := []string{fmt.Sprintf("http://127.0.0.1:%d/v1", srv.p4)}
	if srv.p6 != 0 {
		urls = append(urls, fmt.Sprintf("http://[::1]:%d/v1", srv.p6))
	}
	for _, u := range urls {
		s, note := Find(context.Background(), []string{u})
		var pids []int
		for _, p := range s.Processes() {
			pids = append(pids, p.PID)
		}
		if want := []int{srv.pid, srv.worker}; !slices.Equal(pids, want) || note != "" {
			t.Fatalf("%s: found %v (%q), want the server and its worker %v", u, pids, note, want)
		}
		exe, _ := os.Executable()
		if name := s.Processes()[0].Name; name == "" || !strings.HasPrefix(filepath.Base(exe), name) {
			t.Errorf("name %q, want the start of %q", name, filepath.Base(exe))
		}
	}
	s, _ := Find(context.Background(), urls[:1])
	before, _ := s.CPU()
	var now time.Duration
	for deadline := time.Now().Add(time.Minute); now < before+50*time.Millisecond; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the spinning worker's CPU stayed at %v (from %v) for a minute", now, before)
		}
		now, _ = s.CPU()
	}
	if err := syscall.Kill(srv.worker, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !s.procs[1].gone; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed worker never read as gone")
		}
		s.CPU()
	}
	if after, ok := s.CPU(); !ok || after < now {
		t.Errorf("after the worker exited: CPU %v, %v; want at least %v", after, ok, now)
	}
}
