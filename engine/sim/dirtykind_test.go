package sim

import (
	"net/http"
	"strings"
	"testing"
)

// dirtyRequest is one request of a dirty-data kind, built by hand.
type dirtyRequest struct {
	kind, body, contentType string
	want                    int // the careful server's status
}

func dirtyRequests() []dirtyRequest {
	user := func(content string) string {
		return `{"messages":[{"role":"user","content":"` + content + `"}],"max_tokens":4}`
	}
	withUser := func(extra string) string { return `{"messages":[{"role":"user","content":"hi"}],` + extra + `}` }
	return []dirtyRequest{
		{KindEmpty, ``, "", 400},
		{KindEmpty, user(""), "", 400},
		{KindWhitespace, " \n\t", "", 400},
		{KindWhitespace, user(` \n\t `), "", 400},
		{KindNoMessages, `{"messages":[]}`, "", 400},
		{KindNoMessages, `{"model":"llmload-sim"}`, "", 400},
		{KindOverlong, user(strings.Repeat("overlong ", 2<<20/9)), "", 400}, // 2 MB, within the body limit
		{KindBadRole, `{"messages":[{"role":"wizard","content":"hi"}]}`, "", 400},
		{KindHugeMaxTokens, withUser(`"max_tokens":1000000000`), "", 400},
		{KindNegativeMax, withUser(`"max_tokens":-5`), "", 400},
		{KindUnknownModel, withUser(`"model":"gpt-9"`), "", 404},
		{KindMalformedJSON, `{"messages":[{"role":"user","content":"hi"`, "", 400},
		{KindMalformedJSON, `[1,2]`, "", 400},
		{KindWrongContentType, user("hi"), "text/plain", 415},
		{KindInvalidUTF8, user("caf\xe9 \xff"), "", 400},
		{KindDeepNesting, strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000), "", 400},
		{KindDeepNesting, `{"messages":` + strings.Repeat(`{"a":`, 65) + `1` + strings.Repeat("}", 65) + `}`, "", 400},
		{KindInvisible, user(`zero\u200bwidth\ufeff`), "", 200},
		{KindBidi, user(`abc\u202edef`), "", 200},
		{KindControlChars, user(`bell\u0007 del\u007f`), "", 200},
		{KindEmojiCJK, user(`😀 𠀀`), "", 200},
		{KindEmojiCJK, user(`family 👨\u200d👩\u200d👧 flag 🇯🇵`), "", 200}, // ZWJ sequences are emoji, not invisible text
	}
}

func TestDirtyRequestsGetCarefulAnswers(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	for _, tt := range dirtyRequests() {
		w := serve(s, "POST", "/v1/chat/completions", tt.body, map[string]string{"Content-Type": tt.contentType})
		if got := w.Code; got != tt.want {
			t.Errorf("%s: status = %d, want %d (%.200s)", tt.kind, got, tt.want, w.Body)
			continue
		}
		if tt.want != 200 {
			checkErrorBody(t, w.Code, w.Body.Bytes())
		}
	}
}

// Each request must be sorted into its kind: a defect chosen for every kind
// but that one must not fire, and one chosen for that kind must.
func TestDirtyRequestsAreClassified(t *testing.T) {
	all := map[string]string{}
	for _, kind := range DirtyKinds() {
		all[kind] = "503"
	}
	s := New(zeroCost(Config{Defects: all}))
	defer s.Close()
	for _, tt := range dirtyRequests() {
		w := serve(s, "POST", "/v1/chat/completions", tt.body, map[string]string{"Content-Type": tt.contentType})
		if got, want := w.Code, http.StatusServiceUnavailable; got != want {
			t.Errorf("%s: status with every defect = %d, want %d", tt.kind, got, want)
		}
		checkErrorBody(t, w.Code, w.Body.Bytes())
		if !strings.Contains(w.Body.String(), "for a "+tt.kind+" request") {
			t.Errorf("%s: classified otherwise: %s", tt.kind, w.Body)
		}
	}
	plain := chatBody(t, "a plain question", map[string]any{"max_tokens": 3})
	if got, want := serve(s, "POST", "/v1/chat/completions", plain, map[string]string{"Content-Type": "application/json; charset=utf-8"}).Code, 200; got != want {
		t.Errorf("plain request with every defect: status = %d, want %d", got, want)
	}
}

func TestJSONDepth(t *testing.T) {
	tests := []struct {
		body string
		want int
	}{
		{``, 0},
		{`{"a":[1,{"b":2}]}`, 3},
		{`{"a":"[[[[{{{{"}`, 1},
		{`{"a":"\"[[[["}`, 1},
		{`[[]][[[]]]`, 3},
	}
	for _, tt := range tests {
		if got := jsonDepth([]byte(tt.body)); got != tt.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tt.body, got, tt.want)
		}
	}
}
