// Package nginxtest starts a real nginx for tests, as a gateway in front
// of the servers under test: the test writes the http block's servers,
// the kit the rest of the configuration (a prefix of the test's own, no
// daemon, logs kept for the failure message), waits until every port it
// was asked to listen on accepts, and stops nginx when the test ends.
package nginxtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Binary finds nginx: $LLMLOAD_NGINX, else nginx on PATH, else Debian's
// /usr/sbin/nginx. Without one the test is skipped, or fails under
// CI=true, where .ci/run installs Debian's nginx package.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("LLMLOAD_NGINX"); bin != "" {
		return bin
	}
	if bin, err := exec.LookPath("nginx"); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no nginx (LLMLOAD_NGINX unset, none on PATH or at /usr/sbin/nginx): .ci/run installs Debian's nginx package")
	}
	t.Skip("no nginx: set LLMLOAD_NGINX or install nginx")
	return ""
}

// FreePort returns a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Nginx is a running nginx.
type Nginx struct {
	Dir string // its prefix: configuration, logs, temporary files
	cmd *exec.Cmd
}

// Start runs nginx with servers as the content of its http block and
// waits until each of ports accepts connections on 127.0.0.1. Streams
// pass unbuffered unless a server says otherwise: the gateways llmload
// is pointed at must not buffer, and a test of one that does says so.
func Start(t testing.TB, servers string, ports ...int) *Nginx {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	for _, sub := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers write the test's own temporary directory
	}
	conf := fmt.Sprintf(`%s
daemon off;
master_process on;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[2]s/tmp/body;
  proxy_temp_path %[2]s/tmp/proxy;
  fastcgi_temp_path %[2]s/tmp/fastcgi;
  uwsgi_temp_path %[2]s/tmp/uwsgi;
  scgi_temp_path %[2]s/tmp/scgi;
%[3]s
}
`, user, dir, servers)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	n := &Nginx{Dir: dir, cmd: exec.Command(bin, "-p", dir, "-c", path)}
	var out strings.Builder
	n.cmd.Stdout, n.cmd.Stderr = &out, &out
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- n.cmd.Wait() }()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(os.Interrupt) // fast shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = n.cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for _, port := range ports {
		for {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("nginx exited (%v):\n%s\n%s", err, out.String(), n.ErrorLog())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("nginx did not listen on port %d within 15s:\n%s\n%s", port, out.String(), n.ErrorLog())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return n
}

// ErrorLog returns what nginx logged so far, for a failure message.
func (n *Nginx) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "logs", "error.log"))
	return string(b)
}
