package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/secrettest"
)

// Credentials of the echo tests: a password with characters that every
// escaping changes, and a key long enough for a Bearer suffix.
const (
	echoUser = "alice"
	echoPass = `sk-pw/with+odd&<chars>"`
	echoKey  = "sk-echo-Key_0123456789abcdefXYZ"
)

// echoServer answers every request with its Authorization and X-Api-Key
// headers and URL quoted through echo, in the shape of answer.
func echoServer(answer secrettest.Answer, echo secrettest.Echo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer.Write(w, echo.Quote(r.Header.Get("Authorization"))+" and "+echo.Quote(r.Header.Get("X-Api-Key"))+
			" at "+echo.Quote(r.URL.String()))
	})
}

// echoRequests are a request of each API, whose credentials travel in
// different headers (x-api-key for Messages) and whose failures are read
// by different dialects.
var echoRequests = map[string]*engine.ChatRequest{
	engine.EndpointChat:       {Model: "m", Messages: []engine.Message{{Role: "user", Content: "hi"}}},
	engine.EndpointMessages:   {Endpoint: engine.EndpointMessages, Model: "m", MaxTokens: 4, Messages: []engine.Message{{Role: "user", Content: "hi"}}},
	engine.EndpointResponses:  {Endpoint: engine.EndpointResponses, Model: "m", Prompt: "hi"},
	engine.EndpointEmbeddings: {Endpoint: engine.EndpointEmbeddings, Model: "m", Prompt: "hi"},
}

// TestNoCredentialInAnyErrorMessage sends Bearer and Basic credentials to
// a server that quotes them back in every encoding and every kind of
// failure; no message keeps any form of them.
func TestNoCredentialInAnyErrorMessage(t *testing.T) {
	creds := map[string]func(srv string) Config{
		"bearer": func(srv string) Config { return Config{BaseURL: srv + "/v1", APIKey: echoKey} },
		"basic": func(srv string) Config {
			return Config{BaseURL: strings.Replace(srv, "://", "://"+url.UserPassword(echoUser, echoPass).String()+"@", 1) + "/v1"}
		},
		"query key": func(srv string) Config { return Config{BaseURL: srv + "/v1?api_key=" + url.QueryEscape(echoPass)} },
	}
	forms := secrettest.Forms(echoUser, echoPass, echoKey)
	for _, answer := range secrettest.Answers {
		for _, echo := range secrettest.Echoes {
			srv := serve(t, echoServer(answer, echo))
			for credName, cfg := range creds {
				t.Run(answer.Name+"/"+echo.Name+"/"+credName, func(t *testing.T) {
					c := testClient(t, cfg(srv.URL).BaseURL, func(c *Config) { *c = cfg(srv.URL); c.Tokenizer = TokenizerNone })
					for api, req := range echoRequests {
						res := c.Chat(context.Background(), req)
						if res.Err == nil {
							t.Fatalf("%s request succeeded, want a failure", api)
						}
						if got := secrettest.Leaked(res.Err.Message, forms); len(got) > 0 {
							t.Errorf("%s message %q keeps %q", api, res.Err.Message, got)
						}
						_, err := c.Preflight(context.Background(), "m", api)
						if got := secrettest.Leaked(errString(err), forms); len(got) > 0 {
							t.Errorf("%s preflight error %q keeps %q", api, errString(err), got)
						}
					}
				})
			}
		}
	}
}

// Secrets of the header echo test: a gateway token among the target's
// headers, a user's token among a request's own, a cookie and a key in
// the query, each with characters that every escaping changes.
const (
	echoGateway = `gw-Tok/en+with&<odd>"chars"`
	echoUser2   = "user-Tok_0123456789/xyz"
	echoCookie  = "sess-1d/4f+9a"
	echoQuery   = "sub-Key&val/ue+0123"
)

// headerEchoServer quotes back every header a request carried and its URL.
func headerEchoServer(answer secrettest.Answer, echo secrettest.Echo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var quoted []string
		for _, name := range []string{"X-Gateway-Token", "X-User-Token", "Cookie", "Api-Key"} {
			quoted = append(quoted, echo.Quote(r.Header.Get(name)))
		}
		answer.Write(w, strings.Join(quoted, " / ")+" at "+echo.Quote(r.URL.String()))
	})
}

// TestNoHeaderSecretInAnyErrorMessage: the values of credential headers
// (the target's and a request's own) and of credential query parameters
// never come back in a message, in any encoding or failure.
func TestNoHeaderSecretInAnyErrorMessage(t *testing.T) {
	forms := append(secrettest.Forms("u", echoGateway, echoUser2), secrettest.Forms("u", echoCookie, echoQuery)...)
	for _, answer := range secrettest.Answers {
		for _, echo := range secrettest.Echoes {
			t.Run(answer.Name+"/"+echo.Name, func(t *testing.T) {
				srv := serve(t, headerEchoServer(answer, echo))
				c := testClient(t, srv.URL+"/v1", func(c *Config) {
					c.Tokenizer, c.APIKey, c.Auth = TokenizerNone, echoKey, plan.AuthAPIKey
					c.Headers = []plan.Header{{Name: "X-Gateway-Token", Value: echoGateway}, {Name: "Cookie", Value: "session=" + echoCookie}}
					c.Query = []plan.Header{{Name: "subscription-key", Value: echoQuery}}
				})
				for api, r := range echoRequests {
					req := *r
					req.Headers = []engine.Header{{Name: "X-User-Token", Value: echoUser2}}
					res := c.Chat(context.Background(), &req)
					if res.Err == nil {
						t.Fatalf("%s request succeeded, want a failure", api)
					}
					if got := secrettest.Leaked(res.Err.Message, forms); len(got) > 0 {
						t.Errorf("%s message %q keeps %q", api, res.Err.Message, got)
					}
					_, err := c.Preflight(context.Background(), "m", api)
					if got := secrettest.Leaked(errString(err), forms); len(got) > 0 {
						t.Errorf("%s preflight error %q keeps %q", api, errString(err), got)
					}
				}
			})
		}
	}
	cfg := Config{BaseURL: "http://h/v1", Headers: []plan.Header{{Name: "X-Gateway-Token", Value: echoGateway}},
		Query: []plan.Header{{Name: "subscription-key", Value: echoQuery}}}
	for _, s := range []string{cfg.String(), cfg.GoString()} {
		if got := secrettest.Leaked(s, forms); len(got) > 0 {
			t.Errorf("Config prints %q: %s", got, s)
		}
	}
}
