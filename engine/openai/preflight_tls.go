package openai

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/redact"
)

// Where a user sets each TLS option, for the advice that names it.
const (
	optCACert     = "ca_cert (options.target.ca_cert or --ca-cert)"
	optClientPair = "client_cert and client_key (options.target.client_cert and client_key, or --client-cert and --client-key)"
	optInsecure   = "insecure_skip_verify (options.target.insecure_skip_verify or --insecure)"
	optServerName = "server_name (options.target.server_name)"
)

// tlsAdvice explains a failure of TLS by the option that mends it: the
// server's certificate not trusted or not for the host, a client
// certificate missing or refused; "" for any other failure. status is
// the HTTP status (nginx answers a missing client certificate with a
// 400), handshook that a handshake completed before the server closed.
func (c *Client) tlsAdvice(e *engine.Error, status int, handshook bool) string {
	m := e.Message
	switch {
	case strings.Contains(m, "certificate signed by unknown authority"):
		return c.unknownAuthority(m)
	case hostMismatch(m):
		return c.hostAdvice(m)
	case status == 0 && c.tlsOpts.ClientCert != "" && strings.Contains(m, "remote error: tls:"):
		// The alert is the message: whether Go's transport met it in the
		// handshake or in its read loop ("readLoopPeekFailLocked: ...")
		// is timing, not news for the user.
		return c.clientCertRefused(m[strings.Index(m, "remote error: tls:"):])
	case status == 0 && (strings.Contains(m, "tls: certificate required") || strings.Contains(m, "tls: bad certificate") ||
		strings.Contains(m, "tls: handshake failure")):
		return fmt.Sprintf("the server ended the TLS handshake (%s): it requires a client certificate (mutual TLS); set %s", m, optClientPair)
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(m), "ssl certificate") && c.tlsOpts.ClientCert == "":
		return fmt.Sprintf("HTTP 400 (%s): the server requires a client certificate (mutual TLS); set %s", m, optClientPair)
	case status == 0 && handshook && (e.Class == engine.ErrConnReset || e.Class == engine.ErrNetwork) && c.tlsOpts.ClientCert == "":
		return fmt.Sprintf("the server closed the connection right after the TLS handshake (%s): if it requires a client "+
			"certificate (mutual TLS), set %s", m, optClientPair)
	}
	return ""
}

// unknownAuthority explains a server certificate that no trusted CA signed.
func (c *Client) unknownAuthority(m string) string {
	if c.tlsOpts.CACert != "" {
		return fmt.Sprintf("the server's TLS certificate is not signed by a CA of ca_cert %s (%s): give the CA that issued "+
			"the server's certificate; as a last resort, %s turns verification off", c.tlsOpts.CACert, m, optInsecure)
	}
	return fmt.Sprintf("the server's TLS certificate is signed by an authority llmload does not trust (%s): give that CA's "+
		"PEM file as %s, or add it to SSL_CERT_FILE or the system trust store; as a last resort, %s turns verification off",
		m, optCACert, optInsecure)
}

// hostMismatch spots a certificate valid, but for other names.
func hostMismatch(m string) bool {
	return strings.Contains(m, "x509: certificate is valid for") || strings.Contains(m, "x509: certificate is not valid for any names") ||
		strings.Contains(m, "doesn't contain any IP SANs")
}

// hostAdvice explains a certificate that names neither the base URL's
// host nor server_name.
func (c *Client) hostAdvice(m string) string {
	if n := c.tlsOpts.ServerName; n != "" {
		return fmt.Sprintf("the server's TLS certificate is not for the name %s that server_name gives (%s): set %s to a name "+
			"the certificate holds", n, m, optServerName)
	}
	return fmt.Sprintf("the server's TLS certificate is not for the host %s (%s): set %s to a name the certificate holds, "+
		"or use that name in the base URL", c.base.Hostname(), m, optServerName)
}

// clientCertRefused explains a TLS alert the server sent about the
// client certificate that was given.
func (c *Client) clientCertRefused(m string) string {
	cert := "client_cert " + c.tlsOpts.ClientCert
	switch {
	case strings.Contains(m, "unknown certificate authority"):
		return fmt.Sprintf("the server refused the client certificate of %s (%s): the server does not trust the CA that "+
			"signed it (unknown CA); use a certificate from a CA the server trusts for its clients", cert, m)
	case strings.Contains(m, "expired certificate"):
		return fmt.Sprintf("the server says the client certificate of %s has expired (%s)", cert, m)
	case strings.Contains(m, "bad certificate"), strings.Contains(m, "certificate required"), strings.Contains(m, "unsupported certificate"):
		return fmt.Sprintf("the server refused the client certificate of %s (%s): it is not one the server accepts", cert, m)
	}
	return ""
}

// noHTTP2 is Preflight's error when http2 was asked for and the server
// answered in HTTP/1.x: ALPN settled on http/1.1.
func (c *Client) noHTTP2(target string, major int) error {
	return fmt.Errorf("preflight request to %s: http2 (options.target.http2) asks for HTTP/2, but the server answered "+
		"in HTTP/%d.x: TLS's ALPN settled on http/1.1, so the server (or a proxy in front of it) does not serve HTTP/2; "+
		"drop http2 to measure over HTTP/1.1", redact.URL(target), max(major, 1))
}
