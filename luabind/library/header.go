package library

import (
	"fmt"
	"path/filepath"
	"strings"
)

// header is what a scenario's leading comment says of it.
type header struct {
	summary  string
	keys     []Key
	keysLine int
}

// parseHeader reads the comment lines that open src: the first paragraph
// is the summary, and Keys lines anywhere in it name the keys. The header
// ends at the first line that is not a "--" comment.
func parseHeader(path, src string) (header, error) {
	var h header
	var para []string
	done := false // the first paragraph has ended
	for i, line := range strings.Split(src, "\n") {
		text, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "--")
		if !ok || strings.HasPrefix(text, "[[") {
			break
		}
		text = strings.TrimSpace(text)
		if rest, ok := strings.CutPrefix(text, keysPrefix); ok {
			keys, err := parseKeys(rest)
			if err != nil {
				return header{}, fmt.Errorf("%s:%d: %s %v", path, i+1, keysPrefix, err)
			}
			h.keys = append(h.keys, keys...)
			if h.keysLine == 0 {
				h.keysLine = i + 1
			}
			done = true
			continue
		}
		switch {
		case text == "":
			done = done || len(para) > 0
		case !done:
			para = append(para, text)
		}
	}
	h.summary = summary(filepath.Base(path), strings.Join(para, " "))
	h.keys = sortKeys(h.keys)
	return h, nil
}

// summary drops the file name a header's first line opens with
// ("chat_mix.lua — ...") and the closing full stop: a listing names the
// file in a column of its own.
func summary(name, para string) string {
	for _, sep := range []string{" — ", " – ", " - ", ": "} {
		if rest, ok := strings.CutPrefix(para, name+sep); ok {
			para = rest
			break
		}
	}
	return strings.TrimSuffix(para, ".")
}
