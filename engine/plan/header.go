package plan

import (
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"unicode/utf8"
)

// tokenPunct are the characters besides letters and digits that an
// RFC 9110 token, and so a header name, may hold.
const tokenPunct = "!#$%&'*+-.^_`|~"

// ownedHeaders are the headers the HTTP client writes itself, by canonical
// name, with why a script may not: one set twice would make a request the
// server reads differently from the one measured, or none at all.
var ownedHeaders = map[string]string{
	"Host":              "llmload sets Host from the base URL (to verify TLS against another name, set server_name)",
	"Content-Length":    "llmload sets Content-Length from the body it sends",
	"Transfer-Encoding": "llmload chooses the body's framing",
	"Connection":        "llmload manages its connections (Connection is hop-by-hop)",
	"Keep-Alive":        "llmload manages its connections (Keep-Alive is hop-by-hop)",
	"Upgrade":           "llmload chooses the protocol (for HTTP/2 set http2 or h2c)",
	"Te":                "llmload negotiates transfer codings itself (TE is hop-by-hop)",
	"Trailer":           "llmload sends no trailers",
	"Proxy-Connection":  "llmload manages its connections (Proxy-Connection is hop-by-hop)",
	"Accept-Encoding": "llmload asks for identity: a compressed stream is buffered by its decoder, " +
		"which shifts every token's time",
	"Content-Type": "llmload sets it per request: application/json, or a dirty request's own content type",
	"Accept":       "llmload sets it per request: text/event-stream for a stream, application/json otherwise",
}

// CheckHeader reports why name: value cannot be sent as a header of every
// request, nil when it can: the name must be an RFC 9110 token, not one of
// the headers the client owns (Host, Content-Length, Transfer-Encoding,
// Connection, Upgrade, TE, Trailer, Keep-Alive, Accept-Encoding,
// Content-Type, Accept), and the value must hold no
// control character but tab (CR, LF and NUL would split or cut the
// request). The error names the offending character and its position and
// never quotes the value: a header can carry a credential its name does
// not betray. Callers prefix it with where the header came from.
func CheckHeader(name, value string) error {
	if err := checkHeaderName(name); err != nil {
		return err
	}
	if reason, owned := ownedHeaders[textproto.CanonicalMIMEHeaderKey(name)]; owned {
		return errors.New(reason)
	}
	for i, c := range []rune(value) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("the value holds %s at position %d: a header value cannot hold CR, LF, NUL or another control character",
				describeRune(c), i+1)
		}
	}
	return nil
}

// checkHeaderName reports a name that is not a token.
func checkHeaderName(name string) error {
	if name == "" {
		return errors.New("the name is empty")
	}
	if !utf8.ValidString(name) {
		return errors.New("the name is not valid UTF-8: a header name is a token (letters, digits and " + tokenPunct + ")")
	}
	for i, c := range []rune(name) {
		if !isTokenChar(c) {
			return fmt.Errorf("the name holds %s at position %d: a header name is a token (letters, digits and %s)",
				describeRune(c), i+1, tokenPunct)
		}
	}
	return nil
}

func isTokenChar(c rune) bool {
	return c < utf8.RuneSelf && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.ContainsRune(tokenPunct, c))
}

// describeRune names a character so that an invisible one can be found.
func describeRune(c rune) string {
	switch c {
	case ' ':
		return "a space"
	case ':':
		return "a colon"
	case '\t':
		return "a tab"
	case '\r':
		return "a carriage return (CR)"
	case '\n':
		return "a line feed (LF)"
	case 0:
		return "a NUL byte"
	}
	if c < ' ' || c == 0x7f {
		return fmt.Sprintf("the control character %U", c)
	}
	if c >= utf8.RuneSelf {
		return fmt.Sprintf("the non-ASCII character %q (%U)", c, c)
	}
	return fmt.Sprintf("%q", c)
}

// sensitiveExact are header names that carry credentials without saying
// so in a word sensitiveWords catches.
var sensitiveExact = []string{"cookie", "set-cookie"}

// sensitiveWords mark a header or parameter name as a credential's:
// authorization, api-key, x-api-key, ocp-apim-subscription-key,
// x-auth-token, client-secret, ...
var sensitiveWords = []string{"key", "token", "secret", "auth", "password", "credential"}

// SensitiveName reports whether a header or query parameter of this name
// carries a credential, case-insensitively: authorization,
// proxy-authorization, api-key, x-api-key, cookie, set-cookie and any
// name holding key, token, secret, auth, password or credential. Such a
// value is never printed, and is scrubbed from everything written.
func SensitiveName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range sensitiveExact {
		if n == s {
			return true
		}
	}
	for _, w := range sensitiveWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// AuthStyles are the values Target.Auth may take besides "", in the order
// a message lists them.
func AuthStyles() []string { return []string{AuthBearer, AuthAPIKey, AuthXAPIKey, AuthNone} }

// AuthHeaderName is the header that carries APIKey under t's auth style:
// AuthHeader when set, else Authorization (bearer), api-key or x-api-key;
// "" with AuthNone.
func (t Target) AuthHeaderName() string {
	switch {
	case t.Auth == AuthNone:
		return ""
	case t.AuthHeader != "":
		return t.AuthHeader
	case t.Auth == AuthAPIKey:
		return "api-key"
	case t.Auth == AuthXAPIKey:
		return "x-api-key"
	}
	return "Authorization"
}

// Secrets are the values of t that must never be written anywhere: the
// API key and every header and query parameter value whose name is
// sensitive (SensitiveName). Every redaction the API key gets should get
// them all.
func (t Target) Secrets() []string {
	var out []string
	if t.APIKey != "" {
		out = append(out, t.APIKey)
	}
	for _, list := range [][]Header{t.Headers, t.Query} {
		for _, h := range list {
			if h.Value != "" && SensitiveName(h.Name) {
				out = append(out, h.Value)
			}
		}
	}
	return out
}

// SetHeader sets name to value in headers, replacing a header of the same
// name in any case (as HTTP compares them) and keeping the list sorted by
// name, as a scenario's headers are.
func SetHeader(headers []Header, name, value string) []Header {
	out := make([]Header, 0, len(headers)+1)
	for _, h := range headers {
		if !strings.EqualFold(h.Name, name) {
			out = append(out, h)
		}
	}
	i := 0
	for i < len(out) && out[i].Name < name {
		i++
	}
	out = append(out, Header{})
	copy(out[i+1:], out[i:])
	out[i] = Header{Name: name, Value: value}
	return out
}
