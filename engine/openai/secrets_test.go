package openai

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
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
