package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/nginxtest"
	"github.com/llmload/llmload/engine/tlstest"
)

// gatewayFixture is a real nginx in front of two llmload mock replicas:
// one server block terminating TLS with the test's CA and requiring a
// client certificate, one serving HTTP/2 over TLS, one routing on the
// X-Tenant header (b to the second replica, anything else to the first).
type gatewayFixture struct {
	dir                   string
	mtls, h2, routed      int
	ca, otherCA           string
	clientCert, clientKey string
	truth                 [2]string
	mocks                 [2]*started
	gw                    *nginxtest.Nginx
}

func startGatewayFixture(t *testing.T) *gatewayFixture {
	t.Helper()
	f := &gatewayFixture{dir: t.TempDir()}
	var upstreams [2]string
	for i := range f.mocks {
		f.truth[i] = filepath.Join(f.dir, fmt.Sprintf("truth-%d.jsonl", i))
		m := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "20ms", "--fixed-itl", "2ms", "--truth-log", f.truth[i])
		f.mocks[i], upstreams[i] = m, strings.TrimPrefix(strings.TrimSuffix(m.mockURL(t), "/v1"), "http://")
	}
	ca := tlstest.NewCA(t, "llmload test CA")
	f.ca = ca.WriteCA(t, f.dir)
	f.otherCA = tlstest.NewCA(t, "another CA").WriteCA(t, filepath.Join(f.dir, mkdir(t, f.dir, "other")))
	srvCert, srvKey := ca.Server(t).Write(t, f.dir, "server")
	f.clientCert, f.clientKey = ca.Issue(t, tlstest.Leaf{CommonName: "llmload", Client: true}).Write(t, f.dir, "client")
	f.mtls, f.h2, f.routed = nginxtest.FreePort(t), nginxtest.FreePort(t), nginxtest.FreePort(t)
	stream := `proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off;`
	f.gw = nginxtest.Start(t, fmt.Sprintf(`
  log_format proto '$server_port $server_protocol $http_x_tenant';
  map $http_x_tenant $replica { default %[2]s; b %[3]s; }
  server {
    listen 127.0.0.1:%[4]d ssl;
    ssl_certificate %[5]s; ssl_certificate_key %[6]s;
    ssl_client_certificate %[7]s; ssl_verify_client on;
    access_log %[1]s/access.log proto;
    location / { proxy_pass http://%[2]s; %[8]s }
  }
  server {
    listen 127.0.0.1:%[9]d ssl http2;
    ssl_certificate %[5]s; ssl_certificate_key %[6]s;
    access_log %[1]s/access.log proto;
    location / { proxy_pass http://%[2]s; %[8]s }
  }
  server {
    listen 127.0.0.1:%[10]d;
    access_log %[1]s/access.log proto;
    location / { proxy_pass http://$replica; %[8]s }
  }`, f.dir, upstreams[0], upstreams[1], f.mtls, srvCert, srvKey, f.ca, stream, f.h2, f.routed), f.mtls, f.h2, f.routed)
	return f
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestE2EGatewayTLS: through nginx terminating TLS with a private CA and
// requiring a client certificate, a run with --ca-cert, --client-cert
// and --client-key succeeds; without the client certificate, or trusting
// another CA, the preflight fails before any load and names what to set.
// Over the HTTP/2 server block, --http2 speaks HTTP/2 (nginx's own log
// says so).
func TestE2EGatewayTLS(t *testing.T) {
	f := startGatewayFixture(t)
	run := func(port int, args ...string) (string, string, int) {
		t.Helper()
		argv := append([]string{"run", "../../scenarios/scale_bench.lua", "--target", fmt.Sprintf("https://127.0.0.1:%d/v1", port),
			"--set", "vus=2", "--set", "requests=2", "--set", "max_tokens=8", "-q"}, args...)
		stdout, stderr, code := runBinary(t, cleanEnv(), argv...)
		return stdout, stderr, code
	}
	for _, tc := range []struct {
		name string
		port int
		args []string
		code int
		want string // in stderr
	}{
		{"mTLS", f.mtls, []string{"--ca-cert", f.ca, "--client-cert", f.clientCert, "--client-key", f.clientKey}, 0, ""},
		{"no client certificate", f.mtls, []string{"--ca-cert", f.ca}, 1, "client_cert"},
		{"another CA", f.mtls, []string{"--ca-cert", f.otherCA, "--client-cert", f.clientCert, "--client-key", f.clientKey}, 1, "ca_cert"},
		{"the system's roots", f.h2, nil, 1, "ca_cert"},
		{"HTTP/2", f.h2, []string{"--ca-cert", f.ca, "--http2"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(tc.port, tc.args...)
			// Over HTTP/1.1 the second VU opens a connection of its own,
			// whose handshake is shown; over HTTP/2 every request shares
			// the preflight's.
			if code == 0 && tc.name == "mTLS" && !strings.Contains(stdout, "TLS handshake p50") {
				t.Errorf("a run over TLS shows no TLS handshake figures:\n%s", stdout)
			}
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d naming %q:\n%s\nnginx: %s", code, tc.code, tc.want, stderr, f.gw.ErrorLog())
			}
			if code == 1 && !strings.Contains(stderr, "no load sent") {
				t.Errorf("a TLS failure should stop the run at its preflight:\n%s", stderr)
			}
		})
	}
	log, _ := os.ReadFile(filepath.Join(f.dir, "access.log"))
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d HTTP/2.0 `, f.h2)).Match(log) {
		t.Errorf("nginx logged no HTTP/2 request on its h2 block:\n%s", log)
	}
	if regexp.MustCompile(fmt.Sprintf(`(?m)^%d HTTP/1.1 `, f.h2)).Match(log) {
		t.Errorf("an HTTP/1.1 request reached the h2 block with --http2:\n%s", log)
	}
}

// targetsByHeader is an A/B through one gateway that routes on a header:
// the two targets differ only by their X-Tenant.
const targetsByHeader = `local llm = require("llmload")
options = {
  target = { base_url = %q },
  targets = { a = { headers = { ["X-Tenant"] = "a" } }, b = { headers = { ["X-Tenant"] = "b" } } },
  scenarios = { ab = { executor = "shared-iterations", exec = "ask", vus = 2, iterations = 20 } },
}
function ask(vu)
  llm.chat { messages = { { role = "user", content = "[" .. vu.request_id .. "] hi" } }, max_tokens = 4 }
end
`

// TestE2EGatewayRoutesOnHeader: two targets that differ by a header, one
// gateway that routes on it: each replica served exactly its target's
// requests (their own logs say so), and the result splits them by target.
func TestE2EGatewayRoutesOnHeader(t *testing.T) {
	f := startGatewayFixture(t)
	script := writeFile(t, f.dir, "ab.lua", fmt.Sprintf(targetsByHeader, fmt.Sprintf("http://127.0.0.1:%d/v1", f.routed)))
	out := filepath.Join(f.dir, "ab.json")
	if _, stderr, code := runBinary(t, cleanEnv(), "run", script, "--out", out, "-q"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	st := loadResult(t, out).Stages[0]
	if st.ByTarget["a"].Requests != 10 || st.ByTarget["b"].Requests != 10 {
		t.Errorf("by target: a %d, b %d requests, want 10 each", st.ByTarget["a"].Requests, st.ByTarget["b"].Requests)
	}
	for i, m := range f.mocks {
		m.signalAndWait(t, syscall.SIGINT, 30*time.Second)
		recs := readTruth(t, f.truth[i])
		// The preflight's own request reaches each replica too.
		if n := len(recs); n < 10 || n > 12 {
			t.Errorf("replica %d served %d requests, want its target's 10 (and its preflight)", i, n)
		}
	}
}
