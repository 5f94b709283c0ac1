package sim

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sashabaranov/go-openai"
)

func TestIgnoreEOSAndMinTokens(t *testing.T) {
	// StopFraction 1 stops every answer early unless told otherwise.
	s := New(zeroCost(Config{StopFraction: 1, MinOutputTokens: 1}))
	defer s.Close()
	tests := []struct {
		extra      string
		min, max   int // the output length must lie in [min, max]
		wantFinish openai.FinishReason
	}{
		{`"ignore_eos":true`, 40, 40, openai.FinishReasonLength},
		{`"ignore_eos":false,"min_tokens":35`, 35, 39, openai.FinishReasonStop},
		{`"min_tokens":40`, 40, 40, openai.FinishReasonLength},
		{`"ignore_eos":true,"min_tokens":5`, 40, 40, openai.FinishReasonLength},
	}
	for _, tt := range tests {
		for i := range 5 { // several prompts: the early stop is drawn per request
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"question %d"}],"max_tokens":40,%s}`, i, tt.extra)
			_, finish, n := answer(t, s, body)
			if n < tt.min || n > tt.max || finish != tt.wantFinish {
				t.Errorf("%s, prompt %d: %d tokens, finish %q; want [%d, %d], %q", tt.extra, i, n, finish, tt.min, tt.max, tt.wantFinish)
			}
		}
	}
}

func TestBadExtensions(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	for _, extra := range []string{`"ignore_eos":"yes"`, `"min_tokens":-1`, `"min_tokens":50`, `"min_tokens":1.5`} {
		body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":40,` + extra + `}`
		w := serve(s, "POST", "/v1/chat/completions", body, nil)
		if got, want := w.Code, 400; got != want {
			t.Errorf("%s: status = %d, want %d", extra, got, want)
			continue
		}
		checkErrorBody(t, w.Code, w.Body.Bytes())
	}
	// The legacy route honours the extensions too.
	var resp openai.CompletionResponse
	w := serve(s, "POST", "/v1/completions", `{"prompt":"hi","max_tokens":33,"ignore_eos":true}`, nil)
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Usage.CompletionTokens, 33; got != want {
		t.Errorf("completions with ignore_eos: %d tokens, want %d", got, want)
	}
}
