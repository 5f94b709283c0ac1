package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
)

// ValidateHeader checks one header a request would carry, by
// plan.CheckHeader's rules: its name a token, its value without a control
// character but tab, and not a header the client owns. The error names
// the header, never its value (often a credential), and not the option it
// came from: the caller prefixes that ("headers: ..."). Safe for
// concurrent use.
func ValidateHeader(name, value string) error {
	if err := plan.CheckHeader(name, value); err != nil {
		return fmt.Errorf("header %q: %w", name, err)
	}
	return nil
}

// field is one header every request carries, its name canonical and its
// values shared by every request: clipped, so that a Header.Add on a
// request appends to a copy, never into the shared array.
type field struct {
	name string
	vals []string
}

func newField(name string, vals ...string) field {
	return field{name: http.CanonicalHeaderKey(name), vals: slices.Clip(vals)}
}

// set puts f on h, replacing a header of the same name.
func (f field) set(h http.Header) {
	if f.name != "" {
		h[f.name] = f.vals
	}
}

// targetHeaders are cfg's headers as fields, values of a repeated name
// kept together in order.
func targetHeaders(hs []plan.Header) []field {
	var out []field
	for _, h := range hs {
		name := http.CanonicalHeaderKey(h.Name)
		i := slices.IndexFunc(out, func(f field) bool { return f.name == name })
		if i < 0 {
			out = append(out, field{name: name})
			i = len(out) - 1
		}
		out[i].vals = append(out[i].vals, h.Value)
	}
	for i := range out {
		out[i].vals = slices.Clip(out[i].vals)
	}
	return out
}

// credential is how a request carries the API key: in which header, as
// what (style, one of plan.Auth*), under the name the user knows it by.
// vals is nil when no key is sent.
type credential struct {
	style   string
	display string // "Authorization", "x-api-key", or AuthHeader as written
	field
}

// credentialFor is how a dialect's requests carry cfg's key; messages
// selects the Messages API's own default, x-api-key.
func credentialFor(cfg Config, messages bool) credential {
	style := cfg.Auth
	if style == "" {
		style = plan.AuthBearer
		if messages {
			style = plan.AuthXAPIKey
		}
	}
	display := map[string]string{plan.AuthBearer: "Authorization", plan.AuthAPIKey: "api-key", plan.AuthXAPIKey: "x-api-key"}[style]
	if cfg.AuthHeader != "" {
		display = cfg.AuthHeader
	}
	c := credential{style: style, display: display}
	if cfg.APIKey == "" || style == plan.AuthNone {
		return c
	}
	value := cfg.APIKey
	if style == plan.AuthBearer {
		value = "Bearer " + value
	}
	c.field = newField(display, value)
	return c
}

// Credential is the header that carries t's API key on its requests
// (chat's way: a Bearer token unless t.Auth says otherwise), for another
// client of the same server, such as its /metrics; "" when none is sent.
func Credential(t plan.Target) (name, value string) {
	c := credentialFor(FromTarget(t, 0), false)
	if !c.sent() {
		return "", ""
	}
	return c.name, c.vals[0]
}

// sent reports whether requests carry the key.
func (c credential) sent() bool { return c.vals != nil }

// describe names the way the key travels, as in "sent a Bearer key".
func (c credential) describe() string {
	switch {
	case c.style == plan.AuthBearer && strings.EqualFold(c.display, "Authorization"):
		return "Bearer key"
	case c.style == plan.AuthBearer:
		return "Bearer key in " + c.display
	}
	return "key in " + c.display
}

// authStyles are the values of Config.Auth.
var authStyles = []string{plan.AuthBearer, plan.AuthAPIKey, plan.AuthXAPIKey, plan.AuthNone}

// validateRequestOptions checks the headers, query and auth settings;
// each error starts with its option's name.
func (c Config) validateRequestOptions() error {
	for _, h := range c.Headers {
		if err := ValidateHeader(h.Name, h.Value); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
	}
	for _, q := range c.Query {
		if q.Name == "" {
			return errors.New("query: a parameter has an empty name")
		}
	}
	if c.Auth != "" && !slices.Contains(authStyles, c.Auth) {
		return fmt.Errorf("auth: %q is not a way to send the key: want one of %s", c.Auth, strings.Join(authStyles, ", "))
	}
	if c.AuthHeader == "" {
		return nil
	}
	if c.Auth == plan.AuthNone {
		return errors.New("auth_header: auth = none sends no key, so no header carries it; drop one of the two")
	}
	if err := ValidateHeader(c.AuthHeader, ""); err != nil {
		return fmt.Errorf("auth_header: %w", err)
	}
	return nil
}

// withQuery returns u with params added to its query, each replacing
// the query's parameters of its name; u as it is without params.
func withQuery(u *url.URL, params []plan.Header) *url.URL {
	if len(params) == 0 {
		return u
	}
	out := *u
	q := out.Query()
	for _, p := range params {
		q.Del(p.Name)
	}
	for _, p := range params {
		q.Add(p.Name, p.Value)
	}
	out.RawQuery = q.Encode()
	return &out
}

// secrets are the credentials cfg sends beside the URL's: the key, and
// the values of credential headers in every part a server may quote.
func (c Config) secrets() []string {
	out := []string{c.APIKey}
	for _, h := range c.Headers {
		out = append(out, redact.HeaderSecrets(h.Name, h.Value)...)
	}
	return out
}

// setRequestHeaders puts a request's own headers on h, each replacing
// the target's of its name; a header that would be refused, or that the
// transport would refuse after t0, fails the request before it is sent.
func setRequestHeaders(h http.Header, hs []engine.Header) error {
	for _, rh := range hs {
		if err := ValidateHeader(rh.Name, rh.Value); err != nil {
			return err
		}
		h[http.CanonicalHeaderKey(rh.Name)] = []string{rh.Value}
	}
	return nil
}

// requestSecrets are the credentials of a request's own headers, nil
// when it sends none: its messages are scrubbed of them too.
func requestSecrets(hs []engine.Header) []string {
	var out []string
	for _, h := range hs {
		out = append(out, redact.HeaderSecrets(h.Name, h.Value)...)
	}
	return out
}
