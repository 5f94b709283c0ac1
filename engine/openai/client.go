// Package openai sends chat completions to an OpenAI-compatible endpoint
// and measures them: it streams the server-sent events itself, stamps every
// event when its bytes arrive, and classifies failures into the error
// classes of DESIGN.md. Client implements engine.Client.
package openai

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/h1"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/rxtime"
)

// DefaultMaxConns is the idle connection pool size when Config.MaxConns is 0.
const DefaultMaxConns = 256

// drainGrace bounds how long the rest of a body is read after [DONE] so the
// connection can be reused; a server that keeps the stream open longer
// costs a fresh connection, not a stalled virtual user.
const drainGrace = 200 * time.Millisecond

// Config says where and how to connect.
type Config struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:8000/v1. A trailing
	// slash or a pasted endpoint ("/chat/completions", "/completions",
	// "/responses", "/messages", "/embeddings") is tolerated; a query
	// (Azure's api-version) is kept on every request.
	BaseURL string
	// APIKey is sent as Auth says: by default as "Authorization: Bearer
	// <key>" when non-empty, and as "x-api-key: <key>" to Anthropic's
	// Messages API. It never appears in errors or in Config's String.
	APIKey string
	// Auth is how APIKey is sent: plan.AuthBearer, AuthAPIKey, AuthXAPIKey
	// or AuthNone; "" is each dialect's own way (above). AuthHeader, when
	// set, is the header's name instead of the style's own (Authorization,
	// api-key, x-api-key); a bearer key keeps its "Bearer " prefix.
	Auth, AuthHeader string
	// Headers are sent on every request of every endpoint, after the
	// credentials (so an Authorization here replaces the key's); a
	// request's own headers (engine.ChatRequest.Headers) replace those of
	// the same name. Values of credential headers (redact.SensitiveName)
	// are kept out of every error.
	Headers []plan.Header
	// Query parameters are added to every endpoint's URL; one of the same
	// name in BaseURL's query is replaced.
	Query []plan.Header
	// TLS is the connection's TLS: a CA bundle, a client certificate, the
	// name verified, or no verification; its files are read by New.
	TLS plan.TLS
	// HTTP2 negotiates HTTP/2 over TLS (ALPN) on an https:// BaseURL; H2C
	// speaks HTTP/2 in clear text (prior knowledge) to an http:// one.
	// Streams then share connections: their events are stamped when read,
	// not with the kernel's receive time (see stamp).
	HTTP2, H2C bool
	// Timeouts; 0 selects the matching engine.Default*. TTFTTimeout runs
	// from t0 to the first text; after it, IdleTimeout bounds the gap
	// between events (keep-alive comments do not count as events).
	ConnectTimeout, TTFTTimeout, IdleTimeout, TotalTimeout time.Duration
	// MaxConns sizes the pool of idle keep-alive connections (0:
	// DefaultMaxConns). It never limits concurrent requests: waiting for a
	// pool slot would be counted as server latency.
	MaxConns int
	// Tokenizer counts tokens offline: a tiktoken encoding, "cl100k_base"
	// (engine.DefaultTokenizer, also for ""), "o200k_base", "p50k_base",
	// "r50k_base", the path of a Hugging Face tokenizer.json
	// (tokenize.IsFile), or TokenizerNone.
	Tokenizer string
	// ContinuousUsage asks for cumulative usage in every chunk
	// (stream_options.continuous_usage_stats, a vLLM extension), which
	// gives Result.TokenITL when chunks carry several tokens.
	ContinuousUsage bool
	// NoTraceContext stops the W3C traceparent header every request
	// otherwise carries (options.target.trace_context = false); a
	// traceparent among Headers or a request's own is sent either way.
	NoTraceContext bool
}

// String describes c without its API key, and its headers and query
// by their names alone: their values often are credentials.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("{BaseURL:%s APIKey:%s Auth:%s AuthHeader:%s Headers:%v Query:%v TLS:%+v HTTP2:%t H2C:%t "+
		"ConnectTimeout:%s TTFTTimeout:%s IdleTimeout:%s TotalTimeout:%s MaxConns:%d Tokenizer:%s ContinuousUsage:%t NoTraceContext:%t}",
		redact.URL(c.BaseURL), key, c.Auth, c.AuthHeader, names(c.Headers), names(c.Query), c.TLS, c.HTTP2, c.H2C,
		c.ConnectTimeout, c.TTFTTimeout, c.IdleTimeout, c.TotalTimeout, c.MaxConns, c.Tokenizer, c.ContinuousUsage, c.NoTraceContext)
}

// names lists the names of hs.
func names(hs []plan.Header) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Name
	}
	return out
}

// FromTarget is the Config of a plan's target: every setting it holds,
// with maxConns idle connections kept (a run passes its VUs and a few).
func FromTarget(t plan.Target, maxConns int) Config {
	return Config{
		BaseURL: t.BaseURL, APIKey: t.APIKey, Auth: t.Auth, AuthHeader: t.AuthHeader,
		Headers: t.Headers, Query: t.Query, TLS: t.TLS, HTTP2: t.HTTP2, H2C: t.H2C,
		ConnectTimeout: t.ConnectTimeout, TTFTTimeout: t.TTFTTimeout, IdleTimeout: t.IdleTimeout, TotalTimeout: t.TotalTimeout,
		MaxConns: maxConns, Tokenizer: t.Tokenizer, ContinuousUsage: t.ContinuousUsage,
		NoTraceContext: t.NoTraceContext,
	}
}

// GoString is String, so that %#v does not print the key either.
func (c Config) GoString() string { return "openai.Config" + c.String() }

var _ engine.Client = (*Client)(nil)

// Client sends requests of every endpoint (chat completions, completions,
// Responses, Messages, embeddings) to one server. Safe for concurrent use.
type Client struct {
	base           *url.URL // BaseURL, path without trailing slash
	chatURL        string
	completionsURL string
	responsesURL   string
	messagesURL    string
	embeddingsURL  string
	// transcriptionsURL and speechURL are the speech endpoints'.
	transcriptionsURL, speechURL string
	// overhead holds, by API, the prompt tokens a text-only request costs
	// beyond the offline count of its text (the chat template's, and the
	// tokenizers' difference), as the preflight measured them: what
	// MediaTokens leaves out (see mediaTokens).
	overhead     sync.Map
	modelsURL    string
	key          string
	cred         credential // how the OpenAI dialects send the key
	messagesCred credential // how the Messages dialect does
	headers      []field    // the target's headers, sent after the credentials
	// http2 is set when HTTP/2 over TLS was asked for, which Preflight
	// checks the server agreed to; h2c when HTTP/2 in clear text was.
	http2, h2c bool
	tlsOpts    plan.TLS         // for Preflight's advice
	redactor   *redact.Redactor // the key's and the URLs' credentials, scrubbed from every message
	t          timeouts
	tok        *tokenCounter // nil: no offline tokenizer
	continuous bool
	noTrace    bool // no traceparent of llmload's own (Config.NoTraceContext)
	transport  pool
	http       *http.Client
	// proxy is the transport's proxy function, kept to tell the user in
	// Preflight when a request went through a proxy.
	proxy     func(*http.Request) (*url.URL, error)
	proxyFrom func(scheme string) string
	// sleep and now time Preflight's retries; tests fake them.
	sleep func(context.Context, time.Duration) error
	now   func() time.Time
}

// New validates cfg and returns a client with its own connection pool,
// its certificate files read. The tokenizer's vocabulary is loaded on
// first use of an encoding and shared by every client of the process.
//
// An error about the transport's settings starts with the option's name,
// for the caller to say where the option came from (options.target.NAME,
// a flag): headers, query, auth, auth_header, ca_cert, client_cert,
// client_key, server_name, http2, h2c. insecure_skip_verify cannot be
// wrong; Preflight names it, and these, in its advice.
func New(cfg Config) (*Client, error) {
	return newClient(cfg, http.ProxyFromEnvironment, proxyEnvName)
}

func newClient(cfg Config, proxy func(*http.Request) (*url.URL, error), proxyFrom func(string) string) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base, err := parseBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if err := cfg.validateProtocols(base); err != nil {
		return nil, err
	}
	tlsConf, err := tlsConfig(cfg.TLS, time.Now())
	if err != nil {
		return nil, err
	}
	tok, err := loadTokenizer(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	tr := newTransport(cfg, tlsConf, proxy)
	c := &Client{
		base:       base,
		key:        cfg.APIKey,
		cred:       credentialFor(cfg, false),
		headers:    targetHeaders(cfg.Headers),
		http2:      cfg.HTTP2 && !cfg.H2C,
		h2c:        cfg.H2C,
		tlsOpts:    cfg.TLS,
		tok:        tok,
		continuous: cfg.ContinuousUsage,
		noTrace:    cfg.NoTraceContext,
		t:          cfg.timeouts(),
		transport:  tr,
		http:       &http.Client{Transport: tr, CheckRedirect: noRedirect},
		proxy:      proxy,
		proxyFrom:  proxyFrom,
		sleep:      sleepCtx,
		now:        time.Now,
	}
	c.messagesCred = credentialFor(cfg, true)
	c.setEndpoints(withQuery(base, cfg.Query))
	c.redactor = redact.NewFor(cfg.secrets(), cfg.BaseURL, c.modelsURL, proxyURL(proxy, base))
	return c, nil
}

// setEndpoints sets the URL of each endpoint below base, its query kept.
func (c *Client) setEndpoints(base *url.URL) {
	c.chatURL = endpoint(base, "/chat/completions")
	c.completionsURL = endpoint(base, "/completions")
	c.responsesURL = endpoint(base, "/responses")
	c.messagesURL = endpoint(base, "/messages")
	c.embeddingsURL = endpoint(base, "/embeddings")
	c.transcriptionsURL = endpoint(base, "/audio/transcriptions")
	c.speechURL = endpoint(base, "/audio/speech")
	c.modelsURL = endpoint(base, "/models")
}

// timeouts returns the request deadlines, defaults filled in.
func (c Config) timeouts() timeouts {
	return timeouts{
		ttft:  orDefault(c.TTFTTimeout, plan.DefaultTTFTTimeout),
		idle:  orDefault(c.IdleTimeout, plan.DefaultIdleTimeout),
		total: orDefault(c.TotalTimeout, plan.DefaultTotalTimeout),
	}
}

func (c Config) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"connect", c.ConnectTimeout}, {"TTFT", c.TTFTTimeout}, {"idle", c.IdleTimeout}, {"total", c.TotalTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("openai: negative %s timeout %s", d.name, d.v)
		}
	}
	if c.MaxConns < 0 {
		return fmt.Errorf("openai: negative MaxConns %d", c.MaxConns)
	}
	return c.validateRequestOptions()
}

// validateProtocols checks that HTTP2 and H2C fit base's scheme.
func (c Config) validateProtocols(base *url.URL) error {
	switch {
	case c.H2C && base.Scheme == "https":
		return fmt.Errorf("h2c: the base URL %s is https://, and h2c is HTTP/2 in clear text (prior knowledge); "+
			"for HTTP/2 over TLS set http2 instead", redact.URL(base.String()))
	case c.HTTP2 && !c.H2C && base.Scheme == "http":
		return fmt.Errorf("http2: the base URL %s is http://, and HTTP/2 is negotiated over TLS; use https://, "+
			"or set h2c too for HTTP/2 in clear text (prior knowledge)", redact.URL(base.String()))
	case c.TLS != (plan.TLS{}) && base.Scheme == "http":
		// Silently ignored, a CA or client certificate would make a user
		// believe the run went over TLS.
		return fmt.Errorf("%s: the base URL %s is http://, where no TLS is spoken; use https://, or drop the TLS options",
			tlsOptionSet(c.TLS), redact.URL(base.String()))
	}
	return nil
}

// tlsOptionSet names the first TLS option t sets.
func tlsOptionSet(t plan.TLS) string {
	switch {
	case t.CACert != "":
		return "ca_cert"
	case t.ClientCert != "":
		return "client_cert"
	case t.ClientKey != "":
		return "client_key"
	case t.ServerName != "":
		return "server_name"
	}
	return "insecure_skip_verify"
}

// parseBase checks that s is an absolute http(s) URL with a host, written
// with characters a URL may hold and without a fragment.
func parseBase(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("openai: empty base URL")
	}
	if !strings.Contains(s, "://") {
		return nil, fmt.Errorf("openai: base URL %q must start with http:// or https://", redact.URL(s))
	}
	if err := checkURLChars(s); err != nil {
		return nil, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("openai: invalid base URL %q: %s", redact.URL(s),
			redact.New("", s).Redact(innerMessage(err)))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("openai: base URL %q must start with http:// or https://", redact.URL(s))
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("openai: base URL %q has no host", redact.URL(s))
	}
	if u.Fragment != "" || strings.HasSuffix(s, "#") {
		// A fragment is never sent: whatever it was meant to say (a
		// query, a path) the server would not see it.
		return nil, fmt.Errorf("openai: base URL %q has a fragment (#%s), which is never sent to a server; remove it (a query starts with ?)",
			redact.URL(s), u.Fragment)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	for _, suffix := range endpointPaths {
		u.Path = strings.TrimSuffix(u.Path, suffix)
	}
	u.RawPath = ""
	return u, nil
}

// endpointPaths are the endpoints' paths below the base URL, the longer
// first where one ends another: a base URL pasted with one is cut.
var endpointPaths = []string{"/chat/completions", "/completions", "/responses", "/messages", "/embeddings"}

// checkURLChars refuses characters that a URL cannot hold unescaped
// (RFC 3986): left in, Go sends them percent-encoded, so a stray space in
// "/v 1" becomes a request to /v%201 and a puzzling 404.
func checkURLChars(s string) error {
	for i, r := range s {
		var name string
		switch {
		case r == ' ':
			name = "a space"
		case r == '\t':
			name = "a tab"
		case r < 0x20 || r == 0x7f:
			name = fmt.Sprintf("the control character %U", r)
		case strings.ContainsRune(`"<>\^`+"`"+`{|}`, r):
			name = fmt.Sprintf("the character %q", r)
		default:
			continue
		}
		where := fmt.Sprintf("after %q", redact.URL(s[:i]))
		if inUserinfo(s, i) {
			where = "in its user name or password" // the text before it is secret
		}
		return fmt.Errorf("openai: base URL %q has %s %s; remove it, or percent-encode it (a space is %%20)",
			redact.URL(s), name, where)
	}
	return nil
}

// inUserinfo reports whether byte i of a URL lies in its "user:pass@".
func inUserinfo(s string, i int) bool {
	start := strings.Index(s, "://") + 3
	at := strings.LastIndexByte(s, '@')
	return start >= 3 && i >= start && i < at
}

// endpoint appends path to the base URL's path, keeping its query.
func endpoint(base *url.URL, path string) string {
	u := *base
	u.Path += path
	return u.String()
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// newTransport builds a transport for many concurrent long-lived streams.
// By default it speaks HTTP/1.1 only (a custom dialer turns HTTP/2 off),
// so each in-flight stream has its own connection, as most load clients
// do, and its events carry the kernel's receive times (rxtime). With
// HTTP2 it offers h2 by ALPN and with H2C speaks h2 in clear text; streams
// then share connections, and a server's limit of concurrent streams
// opens another connection rather than queueing a request (HTTP2Config's
// StrictMaxConcurrentRequests stays off). Compression is off so that no
// decoder buffers the stream's chunks.
//
// HTTP/1.1 without a proxy goes through h1, which does each exchange in
// the VU's goroutine instead of handing it to two goroutines per
// connection; net/http's transport does the rest (see package h1).
func newTransport(cfg Config, tlsConf *tls.Config, proxy func(*http.Request) (*url.URL, error)) pool {
	connect := orDefault(cfg.ConnectTimeout, plan.DefaultConnectTimeout)
	conns := cmp.Or(cfg.MaxConns, DefaultMaxConns)
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               proxy,
		DialContext:         rxtime.Dial(d),
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: connect,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// Headers fit in 1 KB, and a body larger than the buffer is
		// written straight through it; the default 4 KB per connection
		// is 40 MB at 10,000 streams. A read of 2 KB holds 8 chunks of a
		// stream that fell behind, and longer header lines are read
		// across reads.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  2 << 10,
	}
	switch {
	case cfg.H2C:
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true) // alone: prior knowledge on http:// URLs
	case cfg.HTTP2:
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true) // what ALPN falls back to; Preflight says so
		tr.Protocols.SetHTTP2(true)
	}
	if cfg.H2C || cfg.HTTP2 {
		return tr
	}
	return &h1.Transport{
		Dial:                tr.DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: connect,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     tr.IdleConnTimeout,
		WriteBufferSize:     tr.WriteBufferSize,
		ReadBufferSize:      tr.ReadBufferSize,
		Proxy:               proxy,
		Fallback:            tr,
	}
}

// pool is a transport whose idle connections can be closed.
type pool interface {
	http.RoundTripper
	CloseIdleConnections()
}

// noRedirect returns a redirect as the response: following it would hide
// a misconfigured URL and add its round trip to the measured latency.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// CloseIdle closes the pool's idle connections. Safe for concurrent use.
func (c *Client) CloseIdle() { c.transport.CloseIdleConnections() }

// redact removes the API key and the base URL's and proxy's credentials,
// in any encoding, from a message that may echo them (a server quoting the
// request), including the head of one that a truncation ("…") cut in two.
func (c *Client) redact(s string) string { return c.redactor.Redact(s) }

// serverMessage is the human message of an error body, redacted before it
// is put on one line and truncated (a secret holding spaces, or cut, would
// escape a redaction after), and again after (a cut one).
func (c *Client) serverMessage(body []byte) string {
	return c.redact(oneLine(c.redact(truncate(serverText(body), maxRedactLen))))
}

// maxRedactLen bounds the text searched for secrets: error bodies can be
// 64 KB, and only the first maxMessageLen bytes are kept anyway.
const maxRedactLen = 4 << 10

// proxyURL returns the proxy's URL for requests to base, or "": its
// credentials are sent (Proxy-Authorization) and may be echoed too.
func proxyURL(proxy func(*http.Request) (*url.URL, error), base *url.URL) string {
	if proxy == nil {
		return ""
	}
	p, err := proxy(&http.Request{Method: http.MethodPost, URL: base, Header: http.Header{}})
	if err != nil || p == nil {
		return ""
	}
	return p.String()
}
