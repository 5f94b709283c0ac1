package openai

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// mTLS is a server configuration that requires a client certificate
// signed by pki.
func mTLS(pki *testPKI, cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.pool()}
}

// TestTLSOptionsConnect: a private CA, a server name other than the
// URL's host, no verification and a client certificate each reach a
// server that wants them; the handshake is timed on a new connection
// only, within Connect.
func TestTLSOptionsConnect(t *testing.T) {
	pki := newPKI(t, "test")
	cert, key := pki.validClient("client")
	ip := &tls.Config{Certificates: []tls.Certificate{pki.server("127.0.0.1")}}
	named := &tls.Config{Certificates: []tls.Certificate{pki.server("llm.internal")}}
	tests := map[string]struct {
		server *tls.Config
		opts   plan.TLS
	}{
		"private CA":  {ip, plan.TLS{CACert: pki.CAFile}},
		"server name": {named, plan.TLS{CACert: pki.CAFile, ServerName: "llm.internal"}},
		"insecure":    {named, plan.TLS{InsecureSkipVerify: true}},
		"mutual TLS":  {mTLS(pki, pki.server("127.0.0.1")), plan.TLS{CACert: pki.CAFile, ClientCert: cert, ClientKey: key}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := serveTLS(t, script{steps: steps(0, okStream("a", "b")...)}, tt.server, false)
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.TLS, c.Tokenizer = tt.opts, TokenizerNone })
			first := c.Chat(context.Background(), chatReq())
			if first.Err != nil {
				t.Fatal(first.Err)
			}
			if first.TLS <= 0 || first.TLS > first.Connect {
				t.Errorf("new connection: TLS %v, Connect %v; want 0 < TLS ≤ Connect", first.TLS, first.Connect)
			}
			second := c.Chat(context.Background(), chatReq())
			if second.Err != nil || second.TLS != 0 {
				t.Errorf("reused connection: err %v, TLS %v; want no handshake", second.Err, second.TLS)
			}
		})
	}
}

// TestPlainConnectionHasNoTLS: a request over plain HTTP has no
// handshake time.
func TestPlainConnectionHasNoTLS(t *testing.T) {
	srv := serve(t, script{steps: steps(0, okStream("a")...)})
	if r := testClient(t, srv.URL+"/v1").Chat(context.Background(), chatReq()); r.Err != nil || r.TLS != 0 {
		t.Errorf("err %v, TLS %v; want none", r.Err, r.TLS)
	}
}

// closeAfterHandshake is a TLS server that completes the handshake and
// closes the connection, as a server that wants a client certificate
// and checks it only afterwards does.
func closeAfterHandshake(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.(*tls.Conn).Handshake()
			_ = conn.Close()
		}
	}()
	return "https://" + l.Addr().String()
}

// nginxNoCert answers as nginx does with ssl_verify_client on and no
// client certificate.
var nginxNoCert = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, "<html><head><title>400 No required SSL certificate was sent</title></head><body>"+
		"<center><h1>400 Bad Request</h1></center><center>No required SSL certificate was sent</center></body></html>")
})

// TestPreflightExplainsTLS: each TLS failure names the option that mends
// it, and the way to set it.
func TestPreflightExplainsTLS(t *testing.T) {
	pki, other := newPKI(t, "test"), newPKI(t, "other")
	strangerCert, strangerKey := other.validClient("stranger")
	ip := &tls.Config{Certificates: []tls.Certificate{pki.server("127.0.0.1")}}
	named := &tls.Config{Certificates: []tls.Certificate{pki.server("llm.internal")}}
	stream := script{steps: steps(0, okStream("pong")...)}
	tests := map[string]struct {
		url  string
		opts func(*Config)
		want []string // in the error, in order
	}{
		"unknown authority": {serveTLS(t, stream, ip, false).URL, nil, []string{
			"the server's TLS certificate is signed by an authority llmload does not trust (tls: failed to verify certificate: x509: certificate signed by unknown authority)",
			"give that CA's PEM file as ca_cert (options.target.ca_cert or --ca-cert)",
			"as a last resort, insecure_skip_verify (options.target.insecure_skip_verify or --insecure) turns verification off"}},
		"another CA in ca_cert": {serveTLS(t, stream, ip, false).URL, func(c *Config) { c.TLS.CACert = other.CAFile }, []string{
			"the server's TLS certificate is not signed by a CA of ca_cert " + other.CAFile,
			"as a last resort, insecure_skip_verify"}},
		"host mismatch": {serveTLS(t, stream, named, false).URL, func(c *Config) { c.TLS.CACert = pki.CAFile }, []string{
			"the server's TLS certificate is not for the host 127.0.0.1 (",
			"set server_name (options.target.server_name) to a name the certificate holds"}},
		"wrong server_name": {serveTLS(t, stream, named, false).URL, func(c *Config) { c.TLS.CACert, c.TLS.ServerName = pki.CAFile, "api.internal" }, []string{
			"the server's TLS certificate is not for the name api.internal that server_name gives (tls: failed to verify certificate: x509: certificate is valid for llm.internal, not api.internal)",
			"set server_name (options.target.server_name)"}},
		"no client certificate": {serveTLS(t, stream, mTLS(pki, pki.server("127.0.0.1")), false).URL, func(c *Config) { c.TLS.CACert = pki.CAFile }, []string{
			"it requires a client certificate (mutual TLS); set client_cert and client_key (options.target.client_cert and client_key, or --client-cert and --client-key)"}},
		"client certificate of an unknown CA": {serveTLS(t, stream, mTLS(pki, pki.server("127.0.0.1")), false).URL, func(c *Config) {
			c.TLS = plan.TLS{CACert: pki.CAFile, ClientCert: strangerCert, ClientKey: strangerKey}
		}, []string{
			"the server refused the client certificate of client_cert " + strangerCert + " (remote error: tls: unknown certificate authority)",
			"the server does not trust the CA that signed it (unknown CA)"}},
		"closed after the handshake": {closeAfterHandshake(t, pki.server("127.0.0.1")), func(c *Config) { c.TLS.CACert = pki.CAFile }, []string{
			"the server closed the connection right after the TLS handshake (",
			"if it requires a client certificate (mutual TLS), set client_cert and client_key"}},
		"nginx wants a certificate": {serveTLS(t, nginxNoCert, ip, false).URL, func(c *Config) { c.TLS.CACert = pki.CAFile }, []string{
			"HTTP 400 (", "No required SSL certificate was sent", "the server requires a client certificate (mutual TLS); set client_cert and client_key"}},
		"http2 not negotiated": {serveTLS(t, stream, ip, false).URL, func(c *Config) { c.TLS.CACert, c.HTTP2 = pki.CAFile, true }, []string{
			"http2 (options.target.http2) asks for HTTP/2, but the server answered in HTTP/1.x: TLS's ALPN settled on http/1.1",
			"drop http2 to measure over HTTP/1.1"}},
		"h2c to an HTTP/1.1 server": {serve(t, stream).URL, func(c *Config) { c.H2C = true }, []string{
			"the server did not answer HTTP/2 in clear text (h2c, prior knowledge)", "drop h2c (options.target.h2c)"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testClient(t, tt.url+"/v1", func(c *Config) {
				c.Tokenizer = TokenizerNone
				if tt.opts != nil {
					tt.opts(c)
				}
			})
			c.sleep = func(context.Context, time.Duration) error { return nil } // a reset is retried
			_, err := c.Preflight(context.Background(), "m")
			got := errString(err)
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error:\n%s\nlacks (in order) %q", got, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
