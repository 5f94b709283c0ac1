package secrettest

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLeaked: every form is found where it is, and only there; a cut form
// counts by its head.
func TestLeaked(t *testing.T) {
	forms := Forms("alice", "p/w+d", "sk-key-0123456789")
	for _, f := range forms {
		if got := Leaked("see "+f+" here", forms); len(got) == 0 {
			t.Errorf("form %q not found", f)
		}
	}
	if got := Leaked("nothing secret", forms); len(got) != 0 {
		t.Errorf("found %q in clean text", got)
	}
	if got := Leaked("cut at sk-key-0…", forms); len(got) == 0 {
		t.Error("a cut key was not found")
	}
}

// TestAnswersQuote: every answer carries the quote.
func TestAnswersQuote(t *testing.T) {
	for _, a := range Answers {
		w := httptest.NewRecorder()
		a.Write(w, "QUOTE")
		if !strings.Contains(w.Body.String(), "QUOTE") {
			t.Errorf("%s: body %q lacks the quote", a.Name, w.Body.String())
		}
	}
}
