package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
)

func TestParseDefects(t *testing.T) {
	tests := []struct {
		specs   []string
		want    map[string]string
		wantErr string // part of the error, "" for none
	}{
		{nil, map[string]string{}, ""},
		{[]string{"overlong=500", " bad_role = hang ", "empty=200", "bidi=reset", "invisible=truncate"},
			map[string]string{KindOverlong: "500", KindBadRole: "hang", KindEmpty: "200", KindBidi: "reset", KindInvisible: "truncate"}, ""},
		{[]string{"overlong"}, nil, `defect "overlong": want kind=behaviour`},
		{[]string{"toolong=500"}, nil, "valid kinds: empty, whitespace"},
		{[]string{"overlong=boom"}, nil, "valid behaviours: 200"},
		{[]string{"overlong=600"}, nil, `unknown defect behaviour "600"`},
		{[]string{"overlong=500", "overlong=502"}, nil, "already set to 500"},
		{[]string{"overlong=500", "overlong=500"}, map[string]string{KindOverlong: "500"}, ""},
	}
	for _, tt := range tests {
		got, err := ParseDefects(tt.specs)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseDefects(%q) = %v", tt.specs, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseDefects(%q) error = %v, want one containing %q", tt.specs, err, tt.wantErr)
		case tt.wantErr == "" && !reflect.DeepEqual(got, tt.want):
			t.Errorf("ParseDefects(%q) = %v, want %v", tt.specs, got, tt.want)
		}
	}
}

// post sends body to the chat route of url with a client timeout.
func post(t *testing.T, url, body string, timeout time.Duration) (*http.Response, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestDefects(t *testing.T) {
	s := New(zeroCost(Config{Defects: map[string]string{
		KindOverlong:      "500",
		KindBadRole:       DefectHang,
		KindUnknownModel:  DefectReset,
		KindInvisible:     DefectTruncate,
		KindMalformedJSON: "200",
	}}))
	url := startServer(t, s)
	user := func(content, extra string) string {
		return `{"messages":[{"role":"user","content":"` + content + `"}],"max_tokens":50,"stream":true` + extra + `}`
	}

	resp, body, err := post(t, url, user(strings.Repeat("long ", 40_000), ""), 10*time.Second)
	if err != nil || resp.StatusCode != 500 {
		t.Fatalf("overlong=500: %v, %v", resp, err)
	}
	checkErrorBody(t, 500, body)

	start := time.Now()
	_, _, err = post(t, url, `{"messages":[{"role":"wizard","content":"hi"}]}`, 300*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("bad_role=hang: err = %v, want the client's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("bad_role=hang: took %v to give up", d)
	}

	_, _, err = post(t, url, user("hi", `,"model":"nope"`), 10*time.Second)
	if !errors.Is(err, syscall.ECONNRESET) && (runtime.GOOS == "linux" || !errors.Is(err, io.EOF)) {
		t.Errorf("unknown_model=reset: err = %v, want a connection reset", err)
	}

	resp, body, err = post(t, url, user(`a\u200bb`, ""), 10*time.Second)
	if resp == nil || resp.StatusCode != 200 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("invisible=truncate: resp %v, err = %v, want a 200 cut short", resp, err)
	}
	if got, want := strings.Count(string(body), "data: "), truncateAfterWrites; got != want || strings.Contains(string(body), "[DONE]") {
		t.Errorf("invisible=truncate: %d events, want %d and no [DONE]: %q", got, want, body)
	}

	resp, body, err = post(t, url, `{"messages": oops`, 10*time.Second)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("malformed_json=200: %v, %v", resp, err)
	}
	var answer openai.ChatCompletionResponse
	if err := json.Unmarshal(body, &answer); err != nil || answer.Usage.CompletionTokens < 1 {
		t.Errorf("malformed_json=200: answer %s: %v", body, err)
	}
	if got, want := s.Stats().Defects, int64(5); got != want {
		t.Errorf("Stats().Defects = %d, want %d", got, want)
	}
}

func TestHangEndsOnClose(t *testing.T) {
	s := New(zeroCost(Config{Defects: map[string]string{KindEmpty: DefectHang}}))
	url := startServer(t, s)
	errc := make(chan error, 1)
	go func() { _, _, err := post(t, url, ``, 30*time.Second); errc <- err }()
	waitFor(t, func() bool { return s.Stats().Defects == 1 })
	if err := s.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Error("a hanging request got an answer after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hanging request outlived Close")
	}
}
