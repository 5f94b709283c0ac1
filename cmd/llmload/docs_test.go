package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The README and the guides under docs/ are the manual. Their Lua examples
// are what users copy, and their links are how a reader finds the rest, so
// both are held to the code here: an example the binary refuses, or a link
// to a heading that was renamed, fails the build instead of a reader.

// docsRoot is the repository root as this package's tests see it.
const docsRoot = "../.."

// docPaths lists the README and every guide under docs/.
func docPaths(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil || len(guides) == 0 {
		t.Fatalf("no guides under docs/: %v", err)
	}
	return append([]string{filepath.Join(docsRoot, "README.md")}, guides...)
}

// docName is a document's path as a reader names it: from the repository root.
func docName(path string) string {
	rel, err := filepath.Rel(docsRoot, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fence is one fenced code block of a document.
type fence struct {
	info string // the first word after the opening fence: "lua", "sh", ""
	line int    // the opening fence's line, from 1
	body string
}

var (
	fenceOpen  = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^ \t`]*)")
	headingRE  = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	codeSpanRE = regexp.MustCompile("(`+)[^`]*?(`+)")
	linkRE     = regexp.MustCompile(`\[[^\]]*\]\(([^()\s]+)\)`)
)

// parseDoc splits a Markdown text into its fenced blocks and its prose: the
// text with every fenced line blanked, so that line numbers still count and
// a "# comment" in a shell block is not taken for a heading.
func parseDoc(text string) (fences []fence, prose []string) {
	lines := strings.Split(text, "\n")
	prose = make([]string, len(lines))
	var open *fence
	var marker string
	var body []string
	for i, line := range lines {
		if open == nil {
			if m := fenceOpen.FindStringSubmatch(line); m != nil {
				open, marker, body = &fence{info: m[2], line: i + 1}, m[1], nil
				continue
			}
			prose[i] = line
			continue
		}
		if closes(line, marker) {
			open.body = strings.Join(body, "\n") + "\n"
			fences = append(fences, *open)
			open = nil
			continue
		}
		body = append(body, line)
	}
	return fences, prose
}

// closes reports whether line ends a block opened with marker: the same
// character at least as many times, and nothing after it.
func closes(line, marker string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	rest := strings.TrimLeft(t, marker[:1])
	return len(t)-len(rest) >= len(marker) && strings.TrimSpace(rest) == ""
}

// docLink is one inline link of a document's prose.
type docLink struct {
	target string
	line   int
}

// links finds the inline links of the prose, across line breaks (a link's
// text may wrap), and not inside code spans, where brackets are just text.
func links(prose []string) []docLink {
	text := strings.Join(prose, "\n")
	text = codeSpanRE.ReplaceAllStringFunc(text, func(span string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, span)
	})
	var out []docLink
	for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, docLink{target: text[m[2]:m[3]], line: 1 + strings.Count(text[:m[0]], "\n")})
	}
	return out
}

// slug is the anchor GitHub gives a heading: lowercase, spaces to '-', and
// every other character that is not a letter, digit, '-' or '_' dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the anchors of a document's headings; a repeated heading
// gets -1, -2, ... as on GitHub.
func anchors(prose []string) []string {
	seen := map[string]int{}
	var out []string
	for _, line := range prose {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", s, n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}

func TestDocsSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Writing a scenario":                        "writing-a-scenario",
		"Result JSON (`--out`)":                     "result-json---out",
		"How fast is llmload itself?":               "how-fast-is-llmload-itself",
		"Against a real server: llama.cpp in CI":    "against-a-real-server-llamacpp-in-ci",
		"The `llmload` module":                      "the-llmload-module",
		"Good practice, checked":                    "good-practice-checked",
		"Live export: Prometheus and OpenTelemetry": "live-export-prometheus-and-opentelemetry",
		"per_tag 指标":                                "per_tag-指标",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestDocsParse holds the parser to the Markdown it meets, so that a link
// or example it failed to see cannot pass unchecked.
func TestDocsParse(t *testing.T) {
	tests := []struct {
		name, text string
		links      []string
		fences     []string // info strings
		anchors    []string
	}{
		{name: "link", text: "see [a](a.md#x) and [b](https://x.org)\n", links: []string{"a.md#x", "https://x.org"}},
		{name: "link text wraps", text: "see [How fast is\nit?](m.md#how)\n", links: []string{"m.md#how"}},
		{name: "code span", text: "a `[1,2](3)` list, [c](c.md)\n", links: []string{"c.md"}},
		{name: "fenced", text: "```lua\n-- [x](y.md)\n# not a heading\n```\n# Title\n", fences: []string{"lua"}, anchors: []string{"title"}},
		{name: "fragment and bare", text: "```lua-fragment\nx = 1\n```\n```\nout\n```\n", fences: []string{"lua-fragment", ""}},
		{name: "repeated heading", text: "# A\n## A\n### B #\n", anchors: []string{"a", "a-1", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fences, prose := parseDoc(tt.text)
			var gotLinks, gotFences []string
			for _, l := range links(prose) {
				gotLinks = append(gotLinks, l.target)
			}
			for _, f := range fences {
				gotFences = append(gotFences, f.info)
			}
			if !slices.Equal(gotLinks, tt.links) {
				t.Errorf("links = %q, want %q", gotLinks, tt.links)
			}
			if !slices.Equal(gotFences, tt.fences) {
				t.Errorf("fences = %q, want %q", gotFences, tt.fences)
			}
			if got := anchors(prose); !slices.Equal(got, tt.anchors) {
				t.Errorf("anchors = %q, want %q", got, tt.anchors)
			}
		})
	}
}

// TestDocsLuaExamples runs every ```lua block through llmload check, as a
// user who pastes it into a file would. A block that is deliberately not a
// whole script says so with another info string (```lua-fragment).
func TestDocsLuaExamples(t *testing.T) {
	// Data paths in a scenario are relative to the script, and the examples
	// name the library's data as a script in scenarios/ would (data/...):
	// a link beside each copied example lets them resolve.
	data, err := filepath.Abs(filepath.Join(docsRoot, "scenarios", "data"))
	if err != nil {
		t.Fatal(err)
	}
	examples := 0
	for _, doc := range docPaths(t) {
		fences, _ := parseDoc(readDoc(t, doc))
		for _, f := range fences {
			if f.info != "lua" {
				continue
			}
			examples++
			where := fmt.Sprintf("%s:%d", docName(doc), f.line)
			t.Run(where, func(t *testing.T) {
				dir := t.TempDir()
				if err := os.Symlink(data, filepath.Join(dir, "data")); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "example.lua")
				writeTestFile(t, path, f.body)
				stdout, stderr, code := runBinary(t, nil, "check", path)
				if code != exitOK {
					t.Errorf("%s: the Lua example fails llmload check (exit %d; its line n is the document's line %d+n):\n%s%s",
						where, code, f.line, stdout, stderr)
				}
			})
		}
	}
	if examples == 0 {
		t.Fatal("no ```lua example in README.md or docs/: the parser no longer sees them")
	}
}

// TestDocsLinks follows every relative link between the documents: the file
// must exist and, for a #fragment, hold a heading with that anchor.
// External links are not fetched: a test must not depend on the network.
func TestDocsLinks(t *testing.T) {
	headings := map[string][]string{} // anchors by document path, read once
	anchorsOf := func(path string) []string {
		if a, ok := headings[path]; ok {
			return a
		}
		_, prose := parseDoc(readDoc(t, path))
		headings[path] = anchors(prose)
		return headings[path]
	}
	checked := 0
	for _, doc := range docPaths(t) {
		_, prose := parseDoc(readDoc(t, doc))
		for _, l := range links(prose) {
			if u, err := url.Parse(l.target); err == nil && u.Scheme != "" {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %s", docName(doc), l.line, l.target)
			file, fragment, _ := strings.Cut(l.target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: %s does not exist", where, docName(path))
				continue
			}
			if fragment == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s: a #fragment into %s, which has no headings", where, docName(path))
				continue
			}
			anchor, err := url.PathUnescape(fragment)
			if err != nil || !slices.Contains(anchorsOf(path), anchor) {
				t.Errorf("%s: no heading in %s has the anchor #%s (it has %s)", where, docName(path), fragment, strings.Join(anchorsOf(path), ", "))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link in README.md or docs/: the parser no longer sees them")
	}
}
