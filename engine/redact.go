package engine

import (
	"net/url"
	"slices"
	"strings"
)

// RedactURL returns s without credentials: the userinfo ("user:pass@") is
// removed and the values of query or fragment parameters whose names mean
// a secret (key, token, api_key, apikey, secret, password, sig, ...) are
// replaced with REDACTED. It works on strings that do not parse as URLs too,
// so it is safe on any user-supplied address.
func RedactURL(s string) string {
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
		if secretName(name) {
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
		if hasValue && secretName(name) {
			parts[i] = p[:strings.IndexByte(p, '=')] + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

// secretName reports whether a parameter name denotes a credential.
func secretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "", ".", "").Replace(name))
	switch n {
	case "sig", "auth", "authorization", "credential", "credentials", "passwd", "pwd", "code":
		return true
	}
	for _, suffix := range []string{"key", "token", "secret", "password", "signature"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}
