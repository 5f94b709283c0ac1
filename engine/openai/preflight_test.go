package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// fakeTarget answers /v1/models and /v1/chat/completions like a small
// OpenAI-compatible server; other paths get 404.
type fakeTarget struct {
	models     string // body of /v1/models
	chatStatus int
	chatBody   string
	chatType   string
	gotModel   chan string
}

func (f *fakeTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, f.models)
	case "/v1/chat/completions":
		var body struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		if f.gotModel != nil {
			f.gotModel <- body.Model
		}
		w.Header().Set("Content-Type", f.chatType)
		w.WriteHeader(f.chatStatus)
		_, _ = io.WriteString(w, f.chatBody)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"detail":"Not Found"}`)
	}
}

func streamingTarget() *fakeTarget {
	body := strings.Join(okStream("pong"), "")
	return &fakeTarget{models: `{"object":"list","data":[{"id":"first-model"},{"id":"second"}]}`,
		chatStatus: 200, chatBody: body, chatType: "text/event-stream", gotModel: make(chan string, 1)}
}

func TestPreflightSucceeds(t *testing.T) {
	tests := map[string]struct {
		model, wantModel string
		target           *fakeTarget
		streamed, usage  bool
	}{
		"given model":  {"mine", "mine", streamingTarget(), true, true},
		"listed model": {"", "first-model", streamingTarget(), true, true},
		"not streaming": {"m", "m", &fakeTarget{chatStatus: 200, chatType: "application/json", gotModel: make(chan string, 1),
			chatBody: `{"choices":[{"index":0,"message":{"role":"assistant","content":"pong"}}]}`}, false, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, tt.target)
			info, err := testClient(t, srv.URL+"/v1").Preflight(context.Background(), tt.model)
			if err != nil {
				t.Fatalf("Preflight: %v", err)
			}
			if got, want := <-tt.target.gotModel, tt.wantModel; got != want {
				t.Errorf("request model = %q, want %q", got, want)
			}
			if got, want := info.Model, tt.wantModel; got != want {
				t.Errorf("Model = %q, want %q", got, want)
			}
			if got, want := info.Streamed, tt.streamed; got != want {
				t.Errorf("Streamed = %v, want %v", got, want)
			}
			if got, want := info.UsageReported, tt.usage; got != want {
				t.Errorf("UsageReported = %v, want %v", got, want)
			}
			if info.Latency <= 0 || (info.TTFT > 0) != tt.streamed {
				t.Errorf("Latency = %v, TTFT = %v", info.Latency, info.TTFT)
			}
		})
	}
}

func TestPreflightExplains(t *testing.T) {
	const key = "sk-secret-123456"
	refused := closedPort(t)
	tests := map[string]struct {
		target *fakeTarget
		path   string // appended to the server URL
		key    string
		model  string
		want   string // the whole message; {srv} is the server's host:port
	}{
		"wrong key": {&fakeTarget{chatStatus: 401, chatType: "application/json",
			chatBody: `{"error":{"message":"invalid key ` + key + `"}}`}, "/v1", key, "m",
			"target rejected the API key (HTTP 401): llmload sent a 16-character Bearer key; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: invalid key [redacted])"},
		"wrong long key": {&fakeTarget{chatStatus: 401, chatType: "application/json",
			chatBody: `{"error":{"message":"no"}}`}, "/v1", "sk-0123456789abcdefWXYZ", "m",
			"target rejected the API key (HTTP 401): llmload sent a Bearer key ending …WXYZ; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: no)"},
		"key that is a plain word": {&fakeTarget{chatStatus: 401, chatType: "application/json",
			chatBody: `{"error":{"message":"bad"}}`}, "/v1", "wrong", "m",
			"target rejected the API key (HTTP 401): llmload sent a 5-character Bearer key; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: bad)"},
		"missing key": {&fakeTarget{chatStatus: 403, chatType: "application/json", chatBody: `{"detail":"Forbidden"}`}, "/v1", "", "m",
			"target requires an API key (HTTP 403); llmload sent no credentials; set --api-key or LLMLOAD_API_KEY"},
		"base lacks /v1": {streamingTarget(), "", "", "m",
			"HTTP 404 from http://{srv}/chat/completions — the base URL probably lacks /v1; try --target http://{srv}/v1"},
		"unknown model": {&fakeTarget{chatStatus: 404, chatType: "application/json",
			chatBody: `{"object":"error","message":"The model 'nope' does not exist."}`}, "/v1", "", "nope",
			`HTTP 404 from http://{srv}/v1/chat/completions — check the model name "nope" and the base URL (server: The model 'nope' does not exist.)`},
		"no model list": {streamingTarget(), "/v2", "", "",
			"HTTP 404 from http://{srv}/v2/models — the server does not list its models; pass the model with --model"},
		"empty model list": {&fakeTarget{models: `{"data":[]}`}, "/v1", "", "",
			"http://{srv}/v1/models lists no models; pass the model with --model"},
		"server error": {&fakeTarget{chatStatus: 500, chatType: "application/json", chatBody: `{"error":{"message":"engine dead"}}`}, "/v1", "", "m",
			"preflight request to http://{srv}/v1/chat/completions failed: http_5xx:500: engine dead"},
		"stream error": {&fakeTarget{chatStatus: 200, chatType: "text/event-stream", chatBody: ev(`{"error":{"message":"OOM"}}`)}, "/v1", "", "m",
			"preflight request to http://{srv}/v1/chat/completions failed: api_error: OOM"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := serve(t, tt.target)
			c := testClient(t, srv.URL+tt.path, func(c *Config) { c.APIKey = tt.key })
			_, err := c.Preflight(context.Background(), tt.model)
			if err == nil {
				t.Fatal("Preflight succeeded, want an error")
			}
			want := strings.ReplaceAll(tt.want, "{srv}", srv.Listener.Addr().String())
			if got := err.Error(); got != want {
				t.Errorf("error:\n got %s\nwant %s", got, want)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		_, err := testClient(t, "http://"+refused+"/v1").Preflight(context.Background(), "m")
		want := "connection refused at " + refused + " — is the server running? (after 4 tries over 3.5 s: conn_refused 4 times)"
		if got := errString(err); got != want {
			t.Errorf("error = %q, want %q", got, want)
		}
		var e *engine.Error
		if !errors.As(err, &e) || e.Class != engine.ErrConnRefused {
			t.Errorf("errors.As(*engine.Error) = %v, want class conn_refused", e)
		}
	})
}

// TestPreflightNamesCredentialsSent: the advice on a 401 says what was
// sent, never the secret itself.
func TestPreflightNamesCredentialsSent(t *testing.T) {
	srv := serve(t, &fakeTarget{chatStatus: 401, chatType: "application/json", chatBody: `{"detail":"Unauthorized"}`})
	tests := map[string]struct {
		userinfo, key string
		want          string
	}{
		"basic auth": {"alice:sk-basic-secret", "",
			"target rejected the credentials (HTTP 401): llmload sent Basic auth for user 'alice' from the base URL; if it wants an API key, set --api-key or LLMLOAD_API_KEY (sent as a Bearer token instead)"},
		"user name only": {"sk-user-as-key", "",
			"target rejected the credentials (HTTP 401): llmload sent Basic auth with the base URL's user name and no password; if it wants an API key, set --api-key or LLMLOAD_API_KEY (sent as a Bearer token instead)"},
		"key wins over basic auth": {"alice:pw", "k",
			"target rejected the API key (HTTP 401): llmload sent a 1-character Bearer key; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY"},
		"no credentials": {"", "",
			"target requires an API key (HTTP 401); llmload sent no credentials; set --api-key or LLMLOAD_API_KEY"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			base := srv.URL + "/v1"
			if tt.userinfo != "" {
				base = strings.Replace(base, "://", "://"+tt.userinfo+"@", 1)
			}
			_, err := testClient(t, base, func(c *Config) { c.APIKey = tt.key }).Preflight(context.Background(), "m")
			if got := errString(err); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// closedPort is a loopback address that refuses connections for as long
// as the test runs: a socket bound there that does not listen. A port
// freed instead went once to another test's listener, which took the
// connection and never answered. Bound without SO_REUSEADDR, the port is
// kept from every other bind, Go's listeners included.
func closedPort(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

func TestPreflightNamesProxy(t *testing.T) {
	// The "proxy" is a loopback server that refuses everything with 403,
	// as a corporate proxy does for hosts it does not know.
	proxy := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "Access denied by proxy policy")
	}))
	deadProxy := closedPort(t)
	target := closedPort(t) // never reached: the proxy answers
	tests := map[string]struct {
		proxy string
		want  string
	}{
		"proxy refuses": {"http://user:hunter2@" + proxy.Listener.Addr().String(),
			"target requires an API key (HTTP 403); llmload sent no credentials; set --api-key or LLMLOAD_API_KEY (server: Access denied by proxy policy)" +
				" (request went through proxy http://" + proxy.Listener.Addr().String() + " from HTTP_PROXY; set NO_PROXY=127.0.0.1 to bypass)"},
		"proxy down": {"http://" + deadProxy,
			"connection refused at proxy " + deadProxy + " — is the proxy running?" +
				" (request went through proxy http://" + deadProxy + " from HTTP_PROXY; set NO_PROXY=127.0.0.1 to bypass)" +
				" (after 4 tries over 3.5 s: conn_refused 4 times)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			pu, err := url.Parse(tt.proxy)
			if err != nil {
				t.Fatal(err)
			}
			c, err := newClient(Config{BaseURL: "http://" + target + "/v1", TTFTTimeout: 10 * time.Second},
				http.ProxyURL(pu), func(string) string { return "HTTP_PROXY" })
			if err != nil {
				t.Fatal(err)
			}
			clk := &fakeClock{}
			c.sleep, c.now = clk.sleep, clk.now
			defer c.CloseIdle()
			_, err = c.Preflight(context.Background(), "m")
			if got := errString(err); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
			if strings.Contains(errString(err), "hunter2") {
				t.Error("error shows the proxy password")
			}
		})
	}
}

func TestPreflightCanceled(t *testing.T) {
	srv := serve(t, script{steps: []step{{wait: time.Hour}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := testClient(t, srv.URL+"/v1").Preflight(ctx, "")
	var e *engine.Error
	if !errors.As(err, &e) || e.Class != engine.ErrCanceled {
		t.Fatalf("error = %v, want class canceled", err)
	}
}
