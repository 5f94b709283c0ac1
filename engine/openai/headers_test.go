package openai

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// pathRecorder answers every request with a model list or a short stream,
// and keeps each request's headers and query by path.
type pathRecorder struct {
	mu   sync.Mutex
	seen map[string]*http.Request
}

func newPathRecorder() *pathRecorder { return &pathRecorder{seen: map[string]*http.Request{}} }

func (rc *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	rc.seen[r.URL.Path] = &http.Request{Header: r.Header.Clone(), URL: r.URL, Method: r.Method}
	rc.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"id":"m"}]}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, strings.Join(okStream("a"), ""))
}

// got is the request seen at path; it fails the test if none came.
func (rc *pathRecorder) got(t *testing.T, path string) *http.Request {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	r := rc.seen[path]
	if r == nil {
		t.Fatalf("no request reached %s", path)
	}
	return r
}

// endpointRequests are a request of every endpoint, a raw (dirty) one
// among them, by the path they reach below /v1.
var endpointRequests = map[string]*engine.ChatRequest{
	"/chat/completions": chatReq(),
	"/completions":      {Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "hi"},
	"/responses":        {Endpoint: engine.EndpointResponses, Model: "m", Prompt: "hi"},
	"/messages":         {Endpoint: engine.EndpointMessages, Model: "m", MaxTokens: 4, Messages: []engine.Message{{Role: "user", Content: "hi"}}},
	"/embeddings":       {Endpoint: engine.EndpointEmbeddings, Model: "m", Prompt: "hi"},
}

// sendAll sends a preflight that lists the models, then a request to
// every endpoint and a raw one to chat, each changed by edit first.
func sendAll(t *testing.T, c *Client, edit func(*engine.ChatRequest)) {
	t.Helper()
	if _, err := c.Preflight(context.Background(), ""); err != nil { // first: its chat request is overwritten
		t.Fatal(err)
	}
	for _, r := range endpointRequests {
		req := *r
		edit(&req)
		c.Chat(context.Background(), &req)
	}
	raw := engine.ChatRequest{Raw: []byte(`{"model": "m", "messages": [`), ContentType: "application/json; charset=latin1"}
	edit(&raw)
	c.Chat(context.Background(), &raw)
}

// TestHeadersOnEveryEndpoint: the target's headers reach every endpoint,
// the model list and a raw request included; a request's own headers
// replace those of the same name, whatever its case, and the target's
// replace the client's credentials.
func TestHeadersOnEveryEndpoint(t *testing.T) {
	rec := newPathRecorder()
	srv := serve(t, rec)
	c := testClient(t, srv.URL+"/v1", func(c *Config) {
		c.APIKey, c.Tokenizer = "sk-key", TokenizerNone
		c.Headers = []plan.Header{{Name: "x-gateway", Value: "gw"}, {Name: "X-Tenant", Value: "t1"}, {Name: "x-multi", Value: "1"},
			{Name: "X-Multi", Value: "2"}, {Name: "anthropic-version", Value: "2099-01-01"}}
	})
	sendAll(t, c, func(r *engine.ChatRequest) {
		r.Headers = []engine.Header{{Name: "x-TENANT", Value: "t2"}, {Name: "X-Request-Only", Value: "r"}}
	})
	for _, path := range append(slices.Collect(maps.Keys(endpointRequests)), "/models") {
		h := rec.got(t, "/v1"+path).Header
		want := map[string][]string{"X-Gateway": {"gw"}, "X-Multi": {"1", "2"}, "X-Tenant": {"t2"}, "X-Request-Only": {"r"}}
		if path == "/models" {
			want["X-Tenant"], want["X-Request-Only"] = []string{"t1"}, nil // a preflight request is the target's own
		}
		if path == "/messages" {
			want["Anthropic-Version"] = []string{"2099-01-01"}
		}
		for name, vals := range want {
			if got := h.Values(name); !slices.Equal(got, vals) {
				t.Errorf("%s: %s = %q, want %q", path, name, got, vals)
			}
		}
	}
	if got := rec.got(t, "/v1/chat/completions").Header.Get("Accept-Encoding"); got != "identity" {
		t.Errorf("Accept-Encoding = %q, want identity", got)
	}
}

// TestRequestHeaderRefused: a request's header that the transport would
// refuse after t0, or that the client owns, fails it before it is sent.
func TestRequestHeaderRefused(t *testing.T) {
	rec := newPathRecorder()
	srv := serve(t, rec)
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
	for name, h := range map[string]engine.Header{
		"line break": {Name: "X-Token", Value: "a\r\nX-Evil: 1"},
		"bad name":   {Name: "X Token", Value: "a"},
		"reserved":   {Name: "content-length", Value: "1"},
	} {
		req := chatReq()
		req.Headers = []engine.Header{h}
		r := c.Chat(context.Background(), req)
		if r.Err == nil || r.Err.Class != engine.ErrInvalidRequest {
			t.Errorf("%s: Err = %v, want %s", name, r.Err, engine.ErrInvalidRequest)
		}
	}
	if len(rec.seen) != 0 {
		t.Errorf("requests reached the server: %v", slices.Collect(maps.Keys(rec.seen)))
	}
}

// TestAuthStyles: the key travels as the auth style and header name say,
// and nowhere else; unset, each dialect keeps its own way.
func TestAuthStyles(t *testing.T) {
	const key = "sk-style-key"
	tests := map[string]struct {
		auth, header string
		chat, msgs   [2]string // header and value on chat and on Messages; "" none
	}{
		"default":           {"", "", [2]string{"Authorization", "Bearer " + key}, [2]string{"X-Api-Key", key}},
		"bearer":            {plan.AuthBearer, "", [2]string{"Authorization", "Bearer " + key}, [2]string{"Authorization", "Bearer " + key}},
		"api-key (Azure)":   {plan.AuthAPIKey, "", [2]string{"Api-Key", key}, [2]string{"Api-Key", key}},
		"x-api-key":         {plan.AuthXAPIKey, "", [2]string{"X-Api-Key", key}, [2]string{"X-Api-Key", key}},
		"none":              {plan.AuthNone, "", [2]string{}, [2]string{}},
		"bearer elsewhere":  {plan.AuthBearer, "X-Gateway-Auth", [2]string{"X-Gateway-Auth", "Bearer " + key}, [2]string{"X-Gateway-Auth", "Bearer " + key}},
		"key elsewhere":     {plan.AuthAPIKey, "ocp-apim-subscription-key", [2]string{"Ocp-Apim-Subscription-Key", key}, [2]string{"Ocp-Apim-Subscription-Key", key}},
		"default elsewhere": {"", "X-Key", [2]string{"X-Key", "Bearer " + key}, [2]string{"X-Key", key}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rec := newPathRecorder()
			srv := serve(t, rec)
			c := testClient(t, srv.URL+"/v1", func(c *Config) {
				c.APIKey, c.Auth, c.AuthHeader, c.Tokenizer = key, tt.auth, tt.header, TokenizerNone
			})
			c.Chat(context.Background(), endpointRequests["/chat/completions"])
			c.Chat(context.Background(), endpointRequests["/messages"])
			for path, want := range map[string][2]string{"/v1/chat/completions": tt.chat, "/v1/messages": tt.msgs} {
				h := rec.got(t, path).Header
				for name, vals := range h {
					if strings.Contains(strings.Join(vals, " "), key) && name != want[0] {
						t.Errorf("%s: the key travels in %s", path, name)
					}
				}
				if want[0] != "" && h.Get(want[0]) != want[1] {
					t.Errorf("%s: %s = %q, want %q", path, want[0], h.Get(want[0]), want[1])
				}
			}
		})
	}
}

// TestQueryOnEveryEndpoint: the query parameters reach every endpoint,
// merged with the base URL's own (Azure's api-version), winning a clash.
func TestQueryOnEveryEndpoint(t *testing.T) {
	rec := newPathRecorder()
	srv := serve(t, rec)
	c := testClient(t, srv.URL+"/v1?api-version=2024-02-01&deployment=gpt", func(c *Config) {
		c.Tokenizer = TokenizerNone
		c.Query = []plan.Header{{Name: "api-version", Value: "2024-10-21"}, {Name: "tag", Value: "a b"}, {Name: "tag", Value: "c"}}
	})
	sendAll(t, c, func(*engine.ChatRequest) {})
	want := url.Values{"api-version": {"2024-10-21"}, "deployment": {"gpt"}, "tag": {"a b", "c"}}
	for _, path := range append(slices.Collect(maps.Keys(endpointRequests)), "/models") {
		if got := rec.got(t, "/v1"+path).URL.Query(); got.Encode() != want.Encode() {
			t.Errorf("%s: query %s, want %s", path, got.Encode(), want.Encode())
		}
	}
}

// TestPreflightSaysHowTheKeyWent: a refused key is described by the way
// it travelled, and a key kept back by auth = none is named as such.
func TestPreflightSaysHowTheKeyWent(t *testing.T) {
	srv := serve(t, &fakeTarget{chatStatus: 401, chatType: "application/json", chatBody: `{"error":{"message":"no"}}`})
	tests := map[string]struct {
		auth, header, want string
	}{
		"api-key": {plan.AuthAPIKey, "",
			"target rejected the API key (HTTP 401): llmload sent a 6-character key in api-key; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: no)"},
		"bearer elsewhere": {plan.AuthBearer, "X-Gw-Auth",
			"target rejected the API key (HTTP 401): llmload sent a 6-character Bearer key in X-Gw-Auth; the key is wrong or lacks access; set --api-key or LLMLOAD_API_KEY (server: no)"},
		"none": {plan.AuthNone, "",
			"target requires an API key (HTTP 401); llmload sent no key: auth = none; set auth (options.target.auth) to bearer, api-key or x-api-key (server: no)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testClient(t, srv.URL+"/v1", func(c *Config) { c.APIKey, c.Auth, c.AuthHeader = "k-1234", tt.auth, tt.header })
			if _, err := c.Preflight(context.Background(), "m"); errString(err) != tt.want {
				t.Errorf("error:\n got %s\nwant %s", errString(err), tt.want)
			}
		})
	}
}
