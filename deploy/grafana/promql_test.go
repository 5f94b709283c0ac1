package grafana

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keywords are PromQL's words that are not metric names where they
// stand without a parenthesis after them (binary operators, modifiers,
// number literals).
var keywords = []string{"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"}

// grouping are the modifiers whose parenthesis holds label names.
var grouping = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

var plainName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// metricNames returns the metric names a PromQL expression (with
// Grafana's $variables) selects, in order, by a small lexer rather than
// Prometheus' parser, whose module would come with Prometheus' whole
// server: a name is an identifier that is neither a function (followed
// by a parenthesis, or an aggregation by a by or without), a keyword, nor inside a label list, a string, a
// selector's braces or a range's brackets; a {__name__=~"a|b"} matcher
// names a and b. Parentheses, braces and brackets must balance.
func metricNames(expr string) ([]string, error) {
	l := lexer{s: expr}
	var names []string
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if err := l.skipString(); err != nil {
				return nil, err
			}
		case c == '{':
			n, err := l.selector()
			if err != nil {
				return nil, err
			}
			names = append(names, n...)
		case c == '[':
			if err := l.skipTo('[', ']'); err != nil {
				return nil, err
			}
		case c == '$':
			l.variable()
		case c >= '0' && c <= '9' || c == '.':
			l.i++
			l.span(func(c byte) bool { return isIdent(c) || c == '.' })
		case isIdentStart(c):
			word := l.span(isIdent)
			next := l.peek()
			lower := strings.ToLower(word)
			switch {
			case slices.Contains(grouping, lower) && next == '(':
				l.skipSpace()
				if err := l.skipTo('(', ')'); err != nil {
					return nil, err
				}
			case next == '(' || slices.Contains(keywords, lower) || slices.Contains(grouping, lower) || l.aggregation():
			default:
				names = append(names, word)
			}
		default:
			if err := l.bracket(c); err != nil {
				return nil, err
			}
			l.i++
		}
	}
	if len(l.open) > 0 {
		return nil, fmt.Errorf("unbalanced %q", l.open)
	}
	return names, nil
}

// lexer walks one expression; open is the stack of parentheses.
type lexer struct {
	s    string
	i    int
	open []byte
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// span consumes the bytes that ok accepts and returns them.
func (l *lexer) span(ok func(byte) bool) string {
	start := l.i
	for l.i < len(l.s) && ok(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

func (l *lexer) skipSpace() { l.span(func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }) }

// peek is the next byte after spaces, 0 at the end.
func (l *lexer) peek() byte {
	l.skipSpace()
	if l.i < len(l.s) {
		return l.s[l.i]
	}
	return 0
}

// aggregation reports whether a by or without clause comes next, as in
// "sum by (le) (...)", so the word before it is an aggregation operator.
func (l *lexer) aggregation() bool {
	rest := l.s[l.i:]
	end := 0
	for end < len(rest) && isIdent(rest[end]) {
		end++
	}
	return rest[:end] == "by" || rest[:end] == "without"
}

// bracket tracks a parenthesis outside selectors and ranges.
func (l *lexer) bracket(c byte) error {
	switch c {
	case '(':
		l.open = append(l.open, c)
	case ')':
		if len(l.open) == 0 {
			return fmt.Errorf("unbalanced ')' at %d", l.i)
		}
		l.open = l.open[:len(l.open)-1]
	case '}', ']':
		return fmt.Errorf("unbalanced %q at %d", c, l.i)
	}
	return nil
}

// skipString consumes a quoted string and returns an error if it is not closed.
func (l *lexer) skipString() error {
	_, err := l.str()
	return err
}

// str consumes a quoted string and returns its content.
func (l *lexer) str() (string, error) {
	q := l.s[l.i]
	var b strings.Builder
	for l.i++; l.i < len(l.s); l.i++ {
		c := l.s[l.i]
		switch {
		case c == '\\' && q != '`' && l.i+1 < len(l.s):
			l.i++
			b.WriteByte(l.s[l.i])
		case c == q:
			l.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("unbalanced quote %c", q)
}

// skipTo consumes from an opening byte to its closing one, strings inside
// included, which holds no metric name (a label list, a range).
func (l *lexer) skipTo(open, close byte) error {
	depth := 0
	for l.i < len(l.s) {
		switch c := l.s[l.i]; {
		case c == '"' || c == '\'' || c == '`':
			if err := l.skipString(); err != nil {
				return err
			}
			continue
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				l.i++
				return nil
			}
		}
		l.i++
	}
	return fmt.Errorf("unbalanced %q", open)
}

// selector consumes a {...} of label matchers and returns the names its
// __name__ matchers select.
func (l *lexer) selector() ([]string, error) {
	var names []string
	l.i++ // {
	for {
		c := l.peek()
		switch {
		case c == 0:
			return nil, fmt.Errorf("unbalanced '{'")
		case c == '}':
			l.i++
			return names, nil
		case c == ',':
			l.i++
		case isIdentStart(c):
			label := l.span(isIdent)
			l.skipSpace()
			op := l.span(func(c byte) bool { return c == '=' || c == '!' || c == '~' })
			if c := l.peek(); c != '"' && c != '\'' && c != '`' {
				return nil, fmt.Errorf("label %s%s without a quoted value", label, op)
			}
			value, err := l.str()
			if err != nil {
				return nil, err
			}
			if label != "__name__" {
				continue
			}
			n, err := nameMatcher(op, value)
			if err != nil {
				return nil, err
			}
			names = append(names, n...)
		default:
			return nil, fmt.Errorf("unexpected %q in a selector", c)
		}
	}
}

// nameMatcher returns the names a __name__ matcher selects; a regex that
// is not an alternation of names cannot be checked, so it is refused.
func nameMatcher(op, value string) ([]string, error) {
	switch op {
	case "=":
		return []string{value}, nil
	case "=~":
		alts := strings.Split(value, "|")
		for _, a := range alts {
			if !plainName.MatchString(a) {
				return nil, fmt.Errorf("__name__=~%q is not a list of names", value)
			}
		}
		return alts, nil
	}
	return nil, fmt.Errorf("__name__%s cannot be checked", op)
}

// variable consumes a Grafana variable: $name or ${name}.
func (l *lexer) variable() {
	l.i++
	if l.i < len(l.s) && l.s[l.i] == '{' {
		l.span(func(c byte) bool { return c != '}' })
		l.i++
		return
	}
	l.span(isIdent)
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`up`, `up`},
		{`sum by (le, stage) (rate(a_bucket{run_id=~"$run_id", x="}"}[$__rate_interval]))`, `a_bucket`},
		{`histogram_quantile(0.99, sum(rate(a_bucket[5m])) by (le)) or b`, `a_bucket b`},
		{`sum(rate(a[1m])) / sum(rate(b[1m])) > bool 0.5`, `a b`},
		{`a + on(instance) group_left(job) b offset 5m`, `a b`},
		{`vllm:num_requests_running{job=~"$server_job"}`, `vllm:num_requests_running`},
		{`{__name__=~"a|b:c", job="x"}`, `a b:c`},
		{`count({__name__="a"})`, `a`},
		{`max without (stage) (x) * 1e3 + Inf`, `x`},
		{`sum(x{l='it\'s'}) by (stage)`, `x`},
		{`${datasource} + c`, `c`},
		{`time() - 1`, ``},
	} {
		got, err := metricNames(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: got %q, want %q", tc.expr, g, tc.want)
		}
	}
	for _, bad := range []string{`sum(a`, `sum a)`, `a{b="c"`, `a[5m`, `a{b}`, `a{b="c}`, `{__name__=~"a.*"}`, `a}`} {
		if got, err := metricNames(bad); err == nil {
			t.Errorf("%s: no error (names %q)", bad, got)
		}
	}
}
