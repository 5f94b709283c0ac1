// Package redact keeps credentials out of everything llmload writes: URLs
// without their userinfo and secret parameters, and text without a run's
// API key in any encoding it could be written in.
package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// URL returns s without credentials: the userinfo ("user:pass@") is
// removed and the values of query or fragment parameters whose names mean
// a secret (key, token, api_key, apikey, secret, password, sig, ...) are
// replaced with REDACTED. It works on strings that do not parse as URLs too,
// so it is safe on any user-supplied address.
func URL(s string) string {
	s = stripUserinfo(s)
	q := strings.IndexAny(s, "?#")
	if q < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:q])
	rest := s[q:]
	for rest != "" {
		sep := rest[0] // '?' or '#'
		end := len(rest)
		if sep == '?' {
			if h := strings.IndexByte(rest, '#'); h >= 0 {
				end = h
			}
		}
		b.WriteByte(sep)
		b.WriteString(redactParams(rest[1:end]))
		rest = rest[end:]
	}
	return b.String()
}

// stripUserinfo removes "userinfo@" from the authority, which starts after
// "://" (or at the start of a string without a scheme) and ends at the
// first '/', '?' or '#'.
func stripUserinfo(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		// A password holding '/' (unescaped) ends the authority early to a
		// parser; a "user:...@" before the query still reads as
		// credentials, and erring towards hiding them is the safe side.
		q := len(s)
		if i := strings.IndexAny(s[start:], "?#"); i >= 0 {
			q = start + i
		}
		at = strings.LastIndexByte(s[start:q], '@')
		if at < 0 || !strings.Contains(s[start:start+at], ":") {
			return s
		}
	}
	return s[:start] + s[start+at+1:]
}

// URLSecrets returns the credentials a URL carries — its password and the
// values of secret-looking query parameters — so that a message echoing
// them back (a server quoting the request) can be scrubbed too.
func URLSecrets(raw string) []string {
	var out []string
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	// The user name is not a secret, and scrubbing a short one ("u")
	// would garble every message; the password is.
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	for name, vals := range u.Query() {
		if SensitiveName(name) {
			out = append(out, vals...)
		}
	}
	return slices.DeleteFunc(out, func(v string) bool { return v == "" })
}

// redactParams redacts the secret values of an "a=1&b=2" list, leaving the
// rest as it was written.
func redactParams(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if hasValue && SensitiveName(name) {
			parts[i] = p[:strings.IndexByte(p, '=')] + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

// SensitiveName reports whether a header or query parameter of this name
// carries a credential, so that its value is kept out of every output: the
// one rule of every package (the client's redactor, the result writer).
// Case, '-', '_' and '.' are ignored; authorization, proxy-authorization,
// api-key, x-api-key, cookie and set-cookie match, and so does any name
// containing key, token, secret, auth, password, credential or signature.
// It errs towards hiding: a "keyword" parameter is hidden too, a loss of
// a value in a message against a leaked credential.
func SensitiveName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
	switch n {
	case "cookie", "setcookie", "sig", "passwd", "pwd", "code":
		return true
	}
	for _, part := range []string{"key", "token", "secret", "auth", "password", "credential", "signature"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// Redacted is what a Redactor puts in place of a credential.
const Redacted = "[redacted]"

// Redactor removes a fixed set of credentials from text, in every form
// llmload sends them and a server may echo them: the API key (sent as
// "Bearer <key>"), a URL's user:password (sent as Basic auth: base64 in the
// standard and URL alphabets, with and without padding), the password
// alone, the pair, secret query parameters, and any of these with bytes
// percent-encoded (either hex case), JSON-escaped or HTML-escaped. A
// message cut by truncation ("…" at its end) loses a cut credential too.
// Generic credentials it was not told of — an "Authorization: Basic" or
// "Bearer" value, an "sk-" key — are removed as by Credentials.
// A nil *Redactor does only the generic part. Safe for concurrent use.
type Redactor struct {
	re  *regexp.Regexp // any form in any escaping; nil without forms
	cut *regexp.Regexp // a tail that starts a form (3 bytes or more): a cut credential
}

// New returns a Redactor for an API key and for the credentials
// that urls carry (the target's base URL, a proxy's URL).
func New(apiKey string, urls ...string) *Redactor { return NewFor([]string{apiKey}, urls...) }

// NewFor returns a Redactor for several secrets (an API key, the values
// of credential headers from HeaderSecrets) and for the credentials that
// urls carry.
func NewFor(secrets []string, urls ...string) *Redactor {
	forms := slices.Clone(secrets)
	for _, raw := range urls {
		forms = append(forms, urlCredentialForms(raw)...)
	}
	forms = slices.DeleteFunc(forms, func(f string) bool { return f == "" })
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	forms = slices.Compact(forms)
	r := &Redactor{}
	if len(forms) == 0 {
		return r
	}
	whole := make([]string, len(forms))
	var heads []string
	for i, f := range forms {
		whole[i] = escapedPattern(f)
		if len(f) > 3 {
			heads = append(heads, prefixPattern(f, 3))
		}
	}
	r.re = regexp.MustCompile(strings.Join(whole, "|"))
	if len(heads) > 0 {
		r.cut = regexp.MustCompile("(?:" + strings.Join(heads, "|") + ")" + partialEscape + "$")
	}
	return r
}

// HeaderSecrets returns the credentials a header carries, for NewFor:
// nothing unless SensitiveName(name); else its value and, since a server
// may quote a part of it, the token after an auth scheme ("Bearer t",
// "Basic b64" with what b64 decodes to and its password) and each value
// of a cookie list ("a=1; b=2").
func HeaderSecrets(name, value string) []string {
	value = strings.TrimSpace(value)
	if !SensitiveName(name) || value == "" {
		return nil
	}
	out := []string{value}
	if scheme, token, ok := strings.Cut(value, " "); ok && !strings.ContainsAny(scheme, "=;") {
		token = strings.TrimSpace(token)
		out = append(out, token)
		if strings.EqualFold(scheme, "basic") {
			out = append(out, basicPair(token)...)
		}
	}
	if n := strings.ToLower(name); n == "cookie" || n == "set-cookie" {
		out = append(out, cookieValues(value)...)
	}
	return slices.Compact(out)
}

// cookieValues are the values of a cookie list of 4 bytes or more: a
// session's secret is long, while scrubbing a flag's "1" or "dark" would
// garble every message and protect nothing.
func cookieValues(list string) []string {
	var out []string
	for _, pair := range strings.Split(list, ";") {
		if _, v, ok := strings.Cut(pair, "="); ok && len(strings.TrimSpace(v)) >= 4 {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// basicPair is what a Basic credential decodes to, "user:password", and
// the password, when it decodes; nil otherwise.
func basicPair(b64 string) []string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(b64); err == nil {
			if _, pass, ok := strings.Cut(string(d), ":"); ok && pass != "" {
				return []string{string(d), pass}
			}
		}
	}
	return nil
}

// urlCredentialForms returns the secrets of a URL and, for its userinfo,
// the Basic-auth encodings of "user:password". With a user name and no
// password the user name is the credential (keys are often passed so).
func urlCredentialForms(raw string) []string {
	forms := URLSecrets(raw)
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return forms
	}
	user := u.User.Username()
	pass, hasPass := u.User.Password()
	if (!hasPass || pass == "") && len(user) >= 4 {
		// Shorter, it would garble every message and protect nothing.
		forms = append(forms, user)
	}
	pair := user + ":" + pass
	forms = append(forms, pair)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(pair)))
	}
	return forms
}

// escapedPattern matches s with any of its characters written literally
// or escaped as a URL (%hh of each byte in either case, + for a space),
// JSON (\uhhhh, \/) or HTML (&amp; &#39; &#x27; ...) would write it.
func escapedPattern(s string) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteString(escapedRune(c))
	}
	return b.String()
}

// prefixPattern matches the first n or more characters of s, each escaped
// as escapedPattern allows: a credential that a truncation cut. n is 3 so
// that an ordinary last letter is not taken for a secret: two characters
// of a secret are not worth an attacker's while, a garbled message is a
// loss to the user.
func prefixPattern(s string, n int) string {
	var b strings.Builder
	rs := []rune(s)
	for i, c := range rs {
		if i >= n {
			b.WriteString("(?:")
		}
		b.WriteString(escapedRune(c))
	}
	b.WriteString(strings.Repeat(")?", max(len(rs)-n, 0)))
	return b.String()
}

// partialEscape matches an escape sequence cut before its end.
const partialEscape = `(?:%[0-9A-Fa-f]?|\\(?:u[0-9A-Fa-f]{0,3})?|&[#a-zA-Z0-9]*)?`

// escapedRune matches one character written literally or escaped.
func escapedRune(c rune) string {
	var pct strings.Builder
	for _, b := range []byte(string(c)) {
		fmt.Fprintf(&pct, "%%(?i:%02x)", b)
	}
	alts := []string{regexp.QuoteMeta(string(c)), pct.String(),
		fmt.Sprintf(`\\u(?i:%04x)`, c), fmt.Sprintf("&#(?:0*%d|(?i:x0*%x));", c, c)}
	switch c {
	case ' ':
		alts = append(alts, `\+`)
	case '/':
		alts = append(alts, `\\/`)
	case '&':
		alts = append(alts, "&amp;")
	case '<':
		alts = append(alts, "&lt;")
	case '>':
		alts = append(alts, "&gt;")
	case '"':
		alts = append(alts, "&quot;", `\\"`)
	case '\\':
		alts = append(alts, `\\\\`)
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// Redact returns s without the credentials r knows, in any form, and
// without generic credentials.
func (r *Redactor) Redact(s string) string {
	if r != nil && r.re != nil {
		s = r.re.ReplaceAllLiteralString(s, Redacted)
		if body, cut := strings.CutSuffix(s, "…"); cut && r.cut != nil {
			if loc := r.cut.FindStringIndex(body); loc != nil {
				s = body[:loc[0]] + Redacted + "…"
			}
		}
	}
	return Credentials(s)
}

// genericCredential matches credentials llmload may not have been told
// of: an Authorization value (Bearer with a token-like value, Basic with a
// base64 value), and OpenAI-style "sk-" keys. Plain words after "Basic" or
// "Bearer" ("Bearer token required") do not match.
var genericCredential = regexp.MustCompile(`\b(Bearer|Basic)(\s+|%20|\+)([A-Za-z0-9._~+/=-]{8,}|[A-Za-z0-9._~+/=-]+…)|\bsk-[A-Za-z0-9_-]{12,}`)

// Credentials removes credentials that look like credentials
// wherever they come from: a Basic value that decodes to "user:password",
// a Bearer value with a digit or punctuation in it, an "sk-" key. It is
// the last guard of anything a server said, for code that does not know
// which credentials were sent.
func Credentials(s string) string {
	if !strings.Contains(s, "Bearer") && !strings.Contains(s, "Basic") && !strings.Contains(s, "sk-") {
		return s
	}
	return genericCredential.ReplaceAllStringFunc(s, func(m string) string {
		sub := genericCredential.FindStringSubmatch(m)
		if sub[1] == "" { // an sk- key
			return Redacted
		}
		if looksLikeCredential(sub[1], strings.TrimSuffix(sub[3], "…")) {
			return sub[1] + sub[2] + Redacted
		}
		return m
	})
}

// looksLikeCredential tells a token after "Basic" or "Bearer" from a word.
func looksLikeCredential(scheme, v string) bool {
	if scheme == "Basic" {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			// A cut value decodes only in part; a prefix of 4n is enough.
			if d, err := enc.DecodeString(v[:len(v)/4*4]); err == nil && strings.Contains(string(d), ":") {
				return true
			}
			if d, err := enc.DecodeString(v); err == nil && strings.Contains(string(d), ":") {
				return true
			}
		}
		return false
	}
	return strings.ContainsAny(v, "0123456789-_.~+/=")
}
