package library

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// keysPrefix starts a header line that names keys. A header may hold
// several, so a long list need not make a long line.
const keysPrefix = "Keys (--set):"

// computed is the default of a call whose default is an expression: only
// running the script would tell its value.
const computed = "?"

// Key is one --set key and its default, as a Keys line spells it.
type Key struct {
	Name string
	// Default is the value the script falls back to without --set: bare,
	// or Go-quoted when it is empty or would not read back as one word
	// (a space, a quote, a lone "?"); "?" for a computed default; "" when
	// the call gives none.
	Default string
}

// String is the key as a Keys line writes it: name=default, or the name
// alone when there is no default.
func (k Key) String() string {
	if k.Default == "" {
		return k.Name
	}
	return k.Name + "=" + k.Default
}

// spell writes a literal default so that parseKeys reads it back.
func spell(v string) string {
	if v == "" || v == computed || strings.Contains(v, " ") || strconv.Quote(v) != `"`+v+`"` {
		return strconv.Quote(v)
	}
	return v
}

// parseKeys reads what follows keysPrefix: keys with their defaults,
// separated by spaces.
func parseKeys(text string) ([]Key, error) {
	var keys []Key
	for text = strings.TrimSpace(text); text != ""; text = strings.TrimLeft(text, " \t") {
		end := strings.IndexAny(text, " \t=")
		if end < 0 {
			end = len(text)
		}
		k := Key{Name: text[:end]}
		if k.Name == "" {
			return nil, errors.New(`"=" without a key before it`)
		}
		text = text[end:]
		if rest, ok := strings.CutPrefix(text, "="); ok {
			var err error
			if k.Default, text, err = parseDefault(k.Name, rest); err != nil {
				return nil, err
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// parseDefault reads one default at the start of text and returns it, as
// spell would write it, with the rest of text.
func parseDefault(key, text string) (string, string, error) {
	if !strings.HasPrefix(text, `"`) {
		end := strings.IndexAny(text, " \t")
		if end < 0 {
			end = len(text)
		}
		if end == 0 {
			return "", "", errors.New(key + `= has no default: write ` + key + `="" for an empty string, or ` + key + ` alone for none`)
		}
		return text[:end], text[end:], nil
	}
	q, err := strconv.QuotedPrefix(text)
	if err != nil {
		return "", "", errors.New(key + ": a quoted default without its closing quote")
	}
	rest := text[len(q):]
	if rest != "" && !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\t") {
		return "", "", errors.New(key + ": want a space after the quoted default")
	}
	v, _ := strconv.Unquote(q)
	return spell(v), rest, nil
}

// sortKeys sorts keys by name, then default, without repeats, so two
// lists compare equal when they hold the same keys.
func sortKeys(keys []Key) []Key {
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Default, b.Default))
	})
	return slices.Compact(keys)
}

// joinKeys writes keys as a Keys line does.
func joinKeys(keys []Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	return strings.Join(s, " ")
}
