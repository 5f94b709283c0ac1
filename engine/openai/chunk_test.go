package openai

import (
	"testing"
)

// TestChunkDecoderSequence feeds one decoder a stream's worth of payloads:
// each must decode as if alone, whatever came before it.
func TestChunkDecoderSequence(t *testing.T) {
	tests := []struct {
		data    string
		wantErr bool
		content string // choice 0's content, "-" for no choices
		finish  string
		isError bool
	}{
		{data: `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`, content: "a", finish: "stop"},
		{data: `{"choices":[{"index":0,"delta":{}}]}`, content: "", finish: ""},
		{data: `{"choices":[]}`, content: "-"},
		{data: "  {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}  \n", content: "b"},
		{data: `{"choices":[{"delta":{"content":"c"}}]} {"x":1}`, wantErr: true},
		{data: `{"choices":[{"delta":{"content":"d"}}]}`, content: "d"},
		{data: `{"choices":[{"delta":{"content":`, wantErr: true},
		{data: `{"object":"error","message":"boom"}`, content: "-", isError: true},
		{data: `null`, content: "-"},
		{data: `123`, wantErr: true},
		{data: `{"id":{"nested":[1,2]},"model":null,"choices":[{"delta":{"content":"e"}}]}`, content: "e"},
		{data: `{"choices":[{"delta":{"content":"\u4f60\n"}}]}`, content: "你\n"},
	}
	var d chunkDecoder
	var c streamChunk
	for i, tt := range tests {
		err := d.decode([]byte(tt.data), &c)
		if got, want := err != nil, tt.wantErr; got != want {
			t.Fatalf("payload %d %q: err = %v, want error: %v", i, tt.data, err, want)
		}
		if err != nil {
			continue
		}
		content, finish := "-", ""
		if len(c.Choices) > 0 {
			content, finish = c.Choices[0].Delta.Content, string(c.Choices[0].FinishReason)
		}
		if content != tt.content || finish != tt.finish {
			t.Errorf("payload %d: content %q finish %q, want %q %q", i, content, finish, tt.content, tt.finish)
		}
		if _, got := c.apiError([]byte(tt.data)); got != tt.isError {
			t.Errorf("payload %d: apiError = %v, want %v", i, got, tt.isError)
		}
	}
}
