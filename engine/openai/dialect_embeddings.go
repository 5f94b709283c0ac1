package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/llmload/llmload/engine"
)

// embeddingsDialect speaks POST /embeddings: one JSON answer, never a
// stream, whose data holds one vector per input. Its measures are E2E,
// the inputs embedded and their tokens (usage.prompt_tokens, else the
// offline tokenizer); nothing is generated.
type embeddingsDialect struct{}

func (embeddingsDialect) url(c *Client) string { return c.embeddingsURL }

func (embeddingsDialect) auth(c *Client, h http.Header) { bearer(c, h) }

func (embeddingsDialect) endName() string { return "a JSON answer" }

func (embeddingsDialect) cutEnd([]byte) bool { return false }

// embeddingsBody is an embeddings request: input is a string or a list.
type embeddingsBody struct {
	Model string `json:"model"`
	Input any    `json:"input"`
}

func (embeddingsDialect) body(req *engine.ChatRequest, _ bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	b := embeddingsBody{Model: req.Model, Input: req.Prompt}
	if req.Inputs != nil {
		b.Input = req.Inputs
	}
	return encode(&b, req.Extra)
}

// inputs is how many inputs req sends.
func inputs(req *engine.ChatRequest) int {
	if req.Inputs != nil {
		return len(req.Inputs)
	}
	return 1
}

// prompt is every input as a user message.
func (embeddingsDialect) prompt(req *engine.ChatRequest) *engine.ChatRequest {
	if req.Inputs == nil {
		return promptView("", nil, req.Prompt)
	}
	msgs := make([]engine.Message, len(req.Inputs))
	for i, in := range req.Inputs {
		msgs[i] = engine.Message{Role: "user", Content: in}
	}
	return &engine.ChatRequest{Messages: msgs}
}

// event refuses a stream: an embeddings answer is one JSON object.
func (embeddingsDialect) event(*stream, event) (delta, *engine.Error) {
	return noText, &engine.Error{Class: engine.ErrStreamMalformed,
		Message: "the embeddings answer is an event stream; want one JSON object (Content-Type application/json)"}
}

// vectorLen is the length of an embedding, counted without decoding its
// numbers: the elements of a JSON array, or the float32s of a base64
// string (encoding_format "base64").
type vectorLen int

func (v *vectorLen) UnmarshalJSON(b []byte) error {
	*v = 0
	b = bytes.TrimSpace(b)
	switch {
	case len(b) >= 2 && b[0] == '[':
		if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
			*v = vectorLen(bytes.Count(b, []byte{','}) + 1)
		}
	case len(b) >= 2 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("embedding: %w", err)
		}
		*v = vectorLen(len(n) / 4)
	}
	return nil
}

// embeddingsAnswer is an embeddings answer, or an error object.
type embeddingsAnswer struct {
	Object errorKind `json:"object"`
	Data   []struct {
		Embedding vectorLen `json:"embedding"`
	} `json:"data"`
	Usage   usage           `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Message json.RawMessage `json:"message"`
}

// complete reads the vectors: one per input, all of one length.
func (d embeddingsDialect) complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error {
	var a embeddingsAnswer
	err := json.Unmarshal(data, &a)
	if usageShapeError(err) {
		a = embeddingsAnswer{}
		err = json.Unmarshal(data, &struct {
			*embeddingsAnswer
			Usage skipped `json:"usage"`
		}{embeddingsAnswer: &a})
	}
	if err != nil {
		return undecodable("embeddings answer", err, data)
	}
	if msg, ok := errorObject(a.Error, a.Message, bool(a.Object)); ok {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	if got, want := len(a.Data), inputs(req); got != want {
		return &engine.Error{Class: engine.ErrStreamMalformed,
			Message: fmt.Sprintf("the answer holds %d embeddings for %d inputs", got, want)}
	}
	dims := 0
	for i := range a.Data {
		if n := int(a.Data[i].Embedding); i == 0 {
			dims = n
		} else if n != dims {
			return &engine.Error{Class: engine.ErrStreamMalformed,
				Message: fmt.Sprintf("embeddings of different lengths (%d and %d) in one answer", dims, n)}
		}
	}
	res.Inputs, res.Dimensions = len(a.Data), dims
	res.InputTokens, res.InputTokensSource = c.inputTokens(a.Usage.Prompt, d.prompt(req))
	return nil
}
