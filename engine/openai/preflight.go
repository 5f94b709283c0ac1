package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
)

// PreflightInfo describes the endpoint as one successful request saw it:
// the first API checked.
type PreflightInfo struct {
	Model   string        // the model used: the one asked for, or the first the server lists
	Latency time.Duration // end to end
	TTFT    time.Duration // zero when the answer was not streamed
	// Streamed is false when the server ignored stream=true: every request
	// will then lack TTFT, ITL and TPOT.
	Streamed bool
	// UsageReported is false when the server sent no believable usage, so
	// output tokens are counted offline by the tokenizer, or from events.
	UsageReported bool
	// Retried says what transient answers were retried before the
	// success, e.g. "503 twice, then ok after 1.2 s"; empty when none.
	Retried string
	// APIs are the endpoints checked, in order (engine.EndpointChat, ...).
	APIs []string
	// TraceIDs are the trace ids the preflight's requests carried (""
	// for one that carried none): a server that traces sends spans of
	// them too, which are llmload's checks and no request of the load.
	TraceIDs []string
}

// preflightError is a preflight failure explained for a human; it wraps the
// classified failure so callers can still errors.As it to *engine.Error.
type preflightError struct {
	msg string
	err *engine.Error
}

func (e *preflightError) Error() string { return e.msg }
func (e *preflightError) Unwrap() error { return e.err }

// Preflight checks that the target answers a tiny request of each API
// before any load is sent, and explains a failure in words a user can act
// on (wrong key, missing /v1, nothing listening, a proxy in the way, an
// API the server does not serve, a header it wants). apis are the
// endpoints the scenario uses (engine.EndpointChat, EndpointResponses,
// EndpointMessages, EndpointEmbeddings), each checked once in order;
// without any, chat is. Completions are checked through chat, so a server
// without a chat template fails it. With an empty model it uses the first
// model {BaseURL}/models lists. Transient answers (429, 502, 503, 504,
// 529, a reset connection, and a refused one in the first seconds, while
// a server starts) are retried with backoff, honouring Retry-After: at
// most PreflightAttempts tries per request and PreflightRetryBudget of
// waiting in all. Safe for concurrent use.
func (c *Client) Preflight(ctx context.Context, model string, apis ...string) (*PreflightInfo, error) {
	apis, err := preflightAPIs(apis)
	if err != nil {
		return nil, err
	}
	r := c.newRetries()
	if model == "" {
		err := r.do(ctx, func() (a attempt, err error) {
			model, a, err = c.firstModel(ctx, apis[0])
			return a, err
		})
		if err != nil {
			return nil, err
		}
	}
	var info *PreflightInfo
	var traces []string
	for _, api := range apis {
		err := r.do(ctx, func() (attempt, error) {
			req := preflightRequest(api, model)
			d := dialectOf(req)
			res, out := c.chat(ctx, req)
			traces = append(traces, res.TraceID)
			c.calibrate(res, d, req)
			if res.Err != nil {
				return attempt{class: res.Err.Class, status: res.Status, retryAfter: out.retryAfter},
					c.explain(d.url(c), api, model, res.Err, res.Status, out)
			}
			if c.http2 && out.protoMajor != 2 {
				return attempt{}, c.noHTTP2(d.url(c), out.protoMajor)
			}
			if info == nil {
				info = &PreflightInfo{Model: model, Latency: res.E2E, TTFT: res.TTFT, Streamed: res.Streamed,
					UsageReported: res.TokensSource == engine.TokensFromUsage || res.InputTokensSource == engine.TokensFromUsage}
			}
			return attempt{}, nil
		})
		if err != nil {
			return nil, err
		}
		info.APIs = append(info.APIs, api)
	}
	info.Retried = r.summary()
	info.TraceIDs = traces
	return info, nil
}

// preflightAPIs is the APIs to check: each once, completions as chat,
// chat when none is named.
func preflightAPIs(apis []string) ([]string, error) {
	var out []string
	for _, api := range apis {
		if api == engine.EndpointCompletions || api == "" {
			api = engine.EndpointChat
		}
		if dialects[api] == nil {
			return nil, fmt.Errorf("preflight: unknown API %q (want one of %s)", api, strings.Join(engine.Endpoints(), ", "))
		}
		if !slices.Contains(out, api) {
			out = append(out, api)
		}
	}
	if len(out) == 0 {
		out = []string{engine.EndpointChat}
	}
	return out, nil
}

// preflightRequest is the tiny request that checks an API: a few tokens
// of answer to "ping" (16 for Responses, OpenAI's least), or one input
// embedded.
func preflightRequest(api, model string) *engine.ChatRequest {
	req := &engine.ChatRequest{Endpoint: api, Model: model, MaxTokens: 4,
		Messages: []engine.Message{{Role: "user", Content: "ping"}}}
	switch api {
	case engine.EndpointResponses:
		req.Messages, req.Prompt, req.MaxTokens = nil, "ping", 16
	case engine.EndpointEmbeddings:
		req.Messages, req.Prompt, req.MaxTokens = nil, "ping", 0
	case engine.EndpointChat:
		req.Endpoint = ""
	case engine.EndpointTranscriptions:
		req.Messages, req.MaxTokens, req.NoStream = nil, 0, true
		req.Audio = pingAudio()
	case engine.EndpointSpeech:
		req.Messages, req.Prompt, req.MaxTokens = nil, "ping", 0
	}
	return req
}

// pingAudio is the half second of audio a transcription's preflight
// sends.
func pingAudio() *media.Item {
	it, err := media.SyntheticAudio(media.AudioSpec{Seconds: 0.5}, 1, 0)
	if err != nil {
		panic("preflight audio: " + err.Error()) // a fixed, valid spec
	}
	return it
}

// firstModel asks the server which models it serves and returns the
// first, with the credentials of api's dialect.
func (c *Client) firstModel(ctx context.Context, api string) (string, attempt, error) {
	d := dialects[api]
	tctx, cancel := context.WithTimeoutCause(ctx, c.t.ttft, causeTTFT)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, c.modelsURL, nil)
	if err != nil {
		return "", attempt{}, fmt.Errorf("listing models: %s", c.redact(innerMessage(err)))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "llmload")
	c.setHeaders(req.Header, d)
	resp, err := c.http.Do(req)
	if err != nil {
		e := c.fail(ctx, tctx, err, phaseRequest)
		if e.Class == engine.ErrTimeoutTTFT {
			e.Message = "no answer within " + c.t.ttft.String()
		}
		return "", attempt{class: e.Class}, c.explain(c.modelsURL, apiModels, "", e, 0, outcome{})
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCompletionBody))
	if err != nil {
		e := c.fail(ctx, tctx, err, phaseBody)
		return "", attempt{class: e.Class}, c.explain(c.modelsURL, modelsAPI(api, resp.StatusCode), "", e, resp.StatusCode, outcome{})
	}
	if resp.StatusCode != http.StatusOK {
		e := &engine.Error{Class: engine.HTTPErrorClass(resp.StatusCode), Message: c.serverMessage(body)}
		a := attempt{class: e.Class, status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		return "", a, c.explain(c.modelsURL, modelsAPI(api, resp.StatusCode), "", e, resp.StatusCode, outcome{location: resp.Header.Get("Location")})
	}
	m, err := c.parseModels(body)
	return m, attempt{}, err
}

func (c *Client) parseModels(body []byte) (string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	where := redact.URL(c.modelsURL)
	if err := json.Unmarshal(body, &list); err != nil {
		return "", fmt.Errorf("%s did not answer with a model list (%v); pass the model with --model", where, err)
	}
	for _, m := range list.Data {
		if m.ID != "" {
			return m.ID, nil
		}
	}
	return "", fmt.Errorf("%s lists no models; pass the model with --model", where)
}

// apiModels stands for the model list in explain: no endpoint's API.
const apiModels = "models"

// modelsAPI is the API explain names for the model list's answer status:
// for a refused key, api, whose credentials the list was asked with (a
// Messages script sends its key in x-api-key there too); otherwise none,
// since the list's route says nothing about api's.
func modelsAPI(api string, status int) string {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return api
	}
	return apiModels
}

// explain turns a failed preflight request to target, of api, into advice.
func (c *Client) explain(target, api, model string, e *engine.Error, status int, out outcome) error {
	location := out.location
	// Only what came from outside is redacted: the key may be a plain word
	// ("wrong") that also appears in llmload's own advice.
	e = &engine.Error{Class: e.Class, Message: c.redact(e.Message)}
	var msg string
	switch {
	case status == http.StatusProxyAuthRequired:
		msg = "the proxy requires authentication (HTTP 407); put the credentials in the proxy URL or set NO_PROXY"
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		msg = c.keyAdvice(status, api) + serverSaid(e.Message, status)
	case status == http.StatusNotFound && !versioned.MatchString(c.base.Path):
		msg = fmt.Sprintf("HTTP 404 from %s — the base URL probably lacks /v1; try --target %s",
			redact.URL(target), redact.URL(endpoint(c.base, "/v1")))
	case (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) && routeAdvice(api) != "" && !namesModel(e.Message):
		msg = fmt.Sprintf("HTTP %d from %s — %s", status, redact.URL(target), routeAdvice(api)) + serverSaid(e.Message, status)
	case status == http.StatusNotFound && model != "":
		msg = fmt.Sprintf("HTTP 404 from %s — check the model name %q and the base URL", redact.URL(target), model) +
			serverSaid(e.Message, status)
	case status == http.StatusNotFound:
		msg = fmt.Sprintf("HTTP 404 from %s — the server does not list its models; pass the model with --model",
			redact.URL(target))
	case status >= 300 && status < 400 && location != "":
		msg = fmt.Sprintf("HTTP %d from %s redirects to %s — use the final URL as --target",
			status, redact.URL(target), redact.URL(location))
	case e.Class == engine.ErrConnRefused:
		msg = c.refusedAdvice(target)
	case schemeAdvice(e, status) != "":
		msg = fmt.Sprintf("preflight request to %s failed: %s; try --target %s",
			redact.URL(target), schemeAdvice(e, status), c.baseWithScheme(otherScheme(c.base.Scheme)))
	case c.tlsAdvice(e, status, out.handshook) != "":
		msg = fmt.Sprintf("preflight request to %s failed: %s", redact.URL(target), c.tlsAdvice(e, status, out.handshook))
	case c.h2c && status == 0:
		msg = fmt.Sprintf("preflight request to %s failed: %s: %s; the server did not answer HTTP/2 in clear text (h2c, prior knowledge): "+
			"it may speak HTTP/1.1 only, or HTTP/2 over TLS alone; drop h2c (options.target.h2c)", redact.URL(target), e.Class, e.Message)
	case isCertError(e.Message):
		msg = fmt.Sprintf("preflight request to %s failed: the server's TLS certificate is not trusted (%s); "+
			"for a private CA add it to SSL_CERT_FILE or the system trust store; if the server speaks plain HTTP, use --target %s",
			redact.URL(target), e.Message, c.baseWithScheme("http"))
	case apiAdvice(api, model, e.Message, status) != "":
		msg = fmt.Sprintf("HTTP %d from %s — %s", status, redact.URL(target), apiAdvice(api, model, e.Message, status)) +
			serverSaid(e.Message, status)
	default:
		msg = fmt.Sprintf("preflight request to %s failed: %s: %s", redact.URL(target), e.Class, e.Message)
	}
	return &preflightError{msg: msg + c.proxyNote(target), err: e}
}

// routeAdvice explains a 404 or 405 on an API's path: the server does not
// serve that API there; "" for chat, whose 404 is explained by the model.
func routeAdvice(api string) string {
	switch api {
	case engine.EndpointResponses:
		return "the server does not serve OpenAI's Responses API (POST /responses; llm.respond); a server that speaks only " +
			"chat completions answers so: use llm.chat, or a server with /v1/responses (OpenAI, vLLM, SGLang)"
	case engine.EndpointMessages:
		return "the server does not serve Anthropic's Messages API (POST /messages; llm.messages); for an OpenAI-compatible " +
			"server use llm.chat; Anthropic's own base URL is https://api.anthropic.com/v1"
	case engine.EndpointEmbeddings:
		return "the server does not serve embeddings (POST /embeddings; llm.embed); vLLM serves them only for an " +
			"embedding model (vllm serve MODEL --runner pooling, or --task embed before 0.10)"
	}
	return ""
}

// namesModel reports a server message about the model rather than the
// route ("The model 'x' does not exist").
func namesModel(msg string) bool { return strings.Contains(strings.ToLower(msg), "model") }

// apiAdvice explains an API's own refusals: the Messages API's version
// header, a model that is not an embedding model, an overloaded server;
// "" when there is nothing to add.
func apiAdvice(api, model, msg string, status int) string {
	lower := strings.ToLower(msg)
	switch {
	case status == statusOverloaded:
		return "the server is overloaded (Anthropic's 529, overloaded_error): lower the load, or retry later"
	case api == engine.EndpointMessages && strings.Contains(lower, "anthropic-version"):
		return "the server rejected the anthropic-version header: llmload sends anthropic-version: " + AnthropicVersion +
			"; a proxy may drop it, or the server wants another version"
	case api == engine.EndpointEmbeddings && status == http.StatusBadRequest &&
		(strings.Contains(lower, "embedding") || strings.Contains(lower, "pooling")):
		return fmt.Sprintf("the model %q does not embed: serve an embedding model for llm.embed", model)
	}
	return ""
}

// statusOverloaded is Anthropic's "overloaded" status.
const statusOverloaded = 529

// schemeAdvice explains a request in the wrong scheme: HTTPS to a plain
// HTTP server (Go's "server gave HTTP response to HTTPS client") or plain
// HTTP to an HTTPS one (Go's and nginx's 400 answers); "" otherwise.
func schemeAdvice(e *engine.Error, status int) string {
	m := e.Message
	switch {
	case strings.Contains(m, "server gave HTTP response to HTTPS client"),
		strings.Contains(m, "first record does not look like a TLS handshake"):
		return "the server speaks plain HTTP, not HTTPS"
	case status == http.StatusBadRequest && (strings.Contains(m, "HTTP request to an HTTPS server") ||
		strings.Contains(m, "plain HTTP request was sent to HTTPS port")):
		return "the server speaks HTTPS, not plain HTTP"
	}
	return ""
}

func otherScheme(scheme string) string {
	if scheme == "https" {
		return "http"
	}
	return "https"
}

// isCertError spots a certificate that failed verification (unknown
// authority, wrong host name, expired), whose types the message keeps.
func isCertError(msg string) bool {
	return strings.Contains(msg, "x509:") || strings.Contains(msg, "tls: failed to verify certificate")
}

// baseWithScheme is the base URL, redacted, with another scheme.
func (c *Client) baseWithScheme(scheme string) string {
	u := *c.base
	u.Scheme = scheme
	return redact.URL(u.String())
}

// versioned matches a base path with an API version segment such as /v1.
var versioned = regexp.MustCompile(`(^|/)v[0-9]+[a-z0-9]*(/|$)`)

// keyAdvice explains a 401 or 403 of api by what was sent.
func (c *Client) keyAdvice(status int, api string) string {
	sent, cred := c.sentCredentials(api), c.credFor(api)
	switch {
	case cred.sent():
		return fmt.Sprintf("target rejected the API key (HTTP %d): llmload %s; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY", status, sent)
	case c.key != "":
		return fmt.Sprintf("target requires an API key (HTTP %d); llmload %s; set auth (options.target.auth) to %s, %s or %s",
			status, sent, plan.AuthBearer, plan.AuthAPIKey, plan.AuthXAPIKey)
	case c.base.User != nil:
		return fmt.Sprintf("target rejected the credentials (HTTP %d): llmload %s; if it wants an API key, set --api-key or LLMLOAD_API_KEY (sent as %s instead)",
			status, sent, cred.keyHeader())
	}
	return fmt.Sprintf("target requires an API key (HTTP %d); llmload %s; set --api-key or LLMLOAD_API_KEY", status, sent)
}

// credFor is how requests of api carry the key.
func (c *Client) credFor(api string) credential {
	if api == engine.EndpointMessages {
		return c.messagesCred
	}
	return c.cred
}

// keyHeader names how a key would travel, as in "sent as a Bearer token".
func (c credential) keyHeader() string {
	switch {
	case c.style == plan.AuthBearer && strings.EqualFold(c.display, "Authorization"):
		return "a Bearer token"
	case c.style == plan.AuthBearer:
		return "a Bearer token in the " + c.display + " header"
	}
	return "the " + c.display + " header"
}

// keySuffixMin is the shortest key whose last keySuffixLen characters are
// shown: on a shorter key (a placeholder such as "wrong") the suffix would
// be most of it.
const (
	keySuffixMin = 20
	keySuffixLen = 4
)

// sentCredentials says which credentials a request of api carried,
// without them: a key by its last four characters (as key dashboards name
// keys), Basic auth from the base URL by its user name, unless the user
// name is all there is (then it is the credential).
func (c *Client) sentCredentials(api string) string {
	cred := c.credFor(api)
	switch {
	case cred.sent() && len(c.key) >= keySuffixMin:
		return "sent a " + cred.describe() + " ending …" + c.key[len(c.key)-keySuffixLen:]
	case cred.sent():
		return fmt.Sprintf("sent a %d-character %s", len(c.key), cred.describe())
	case c.key != "":
		return "sent no key: auth = none"
	case c.base.User == nil:
		return "sent no credentials"
	}
	if p, ok := c.base.User.Password(); ok && p != "" && c.base.User.Username() != "" {
		return fmt.Sprintf("sent Basic auth for user %s from the base URL", quoteUser(c.base.User.Username()))
	}
	return "sent Basic auth with the base URL's user name and no password"
}

// quoteUser quotes a user name as 'name', escaping what would not print.
func quoteUser(name string) string {
	q := strconv.Quote(name)
	return "'" + strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`) + "'"
}

// serverSaid quotes the server's message unless it is just the status text.
func serverSaid(msg string, status int) string {
	if msg == "" || strings.EqualFold(msg, http.StatusText(status)) {
		return ""
	}
	return " (server: " + msg + ")"
}

// refusedAdvice names the address that refused: the proxy's when one was used.
func (c *Client) refusedAdvice(target string) string {
	if p := c.proxyFor(target); p != nil {
		return fmt.Sprintf("connection refused at proxy %s — is the proxy running?", hostPort(p))
	}
	u, err := url.Parse(target)
	if err != nil {
		return "connection refused — is the server running?"
	}
	return fmt.Sprintf("connection refused at %s — is the server running?", hostPort(u))
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// proxyFor returns the proxy the transport uses for target, or nil.
func (c *Client) proxyFor(target string) *url.URL {
	u, err := url.Parse(target)
	if err != nil || c.proxy == nil {
		return nil
	}
	p, err := c.proxy(&http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}})
	if err != nil {
		return nil
	}
	return p
}

// proxyNote tells the user that the request went through a proxy, which
// explains many failures that the target itself would not cause.
func (c *Client) proxyNote(target string) string {
	p := c.proxyFor(target)
	if p == nil {
		return ""
	}
	u, _ := url.Parse(target)
	return fmt.Sprintf(" (request went through proxy %s from %s; set NO_PROXY=%s to bypass)",
		redact.URL(p.String()), c.proxyFrom(u.Scheme), u.Hostname())
}

// proxyEnvName names the variable http.ProxyFromEnvironment took the proxy
// for scheme from, in its order of preference.
func proxyEnvName(scheme string) string {
	names := []string{"HTTP_PROXY", "http_proxy"}
	if scheme == "https" {
		names = []string{"HTTPS_PROXY", "https_proxy"}
	}
	for _, n := range names {
		if os.Getenv(n) != "" {
			return n
		}
	}
	return names[0]
}
