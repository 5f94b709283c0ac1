package openai

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
)

// completion is a complete (non-streamed) answer of either endpoint, or an
// error object sent with a 2xx. Usage is decoded leniently (see usage).
type completion struct {
	Object  errorKind          `json:"object"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
	Error   json.RawMessage    `json:"error"`
	Message json.RawMessage    `json:"message"`
	Timings *timings           `json:"timings"`
}

// completionWithoutUsage decodes a completion but skips its usage member.
type completionWithoutUsage struct {
	*completion
	Usage skipped `json:"usage"`
}

// completionChoice is a chat choice (message) or a completions one (text).
type completionChoice struct {
	Index        int        `json:"index"`
	Message      chunkDelta `json:"message"`
	Text         string     `json:"text"`
	FinishReason string     `json:"finish_reason"`
}

// readCompletion measures a complete answer: E2E when the whole body has
// been read, and tokens. TTFT, TTFC, ITL and TPOT stay absent: no token's
// arrival can be observed, and E2E must not pose as any of them.
func (c *Client) readCompletion(parent, ctx context.Context, res *engine.Result, body io.Reader, req *engine.ChatRequest) {
	data, err := io.ReadAll(io.LimitReader(body, maxCompletionBody+1))
	if err != nil {
		res.Err = c.fail(parent, ctx, err, phaseBody)
		return
	}
	end := time.Now()
	if len(data) > maxCompletionBody {
		res.Err = &engine.Error{Class: engine.ErrStreamMalformed, Message: "completion body larger than 32 MiB"}
		return
	}
	var cr completion
	err = json.Unmarshal(data, &cr)
	if usageShapeError(err) {
		cr = completion{}
		err = json.Unmarshal(data, &completionWithoutUsage{completion: &cr})
	}
	if err != nil {
		res.Err = &engine.Error{Class: engine.ErrStreamMalformed,
			Message: c.redact("undecodable completion: " + err.Error() + "; body: " + truncate(string(data), 100))}
		return
	}
	if msg, ok := errorObject(cr.Error, cr.Message, bool(cr.Object)); ok {
		res.Err = &engine.Error{Class: engine.ErrAPI, Message: c.redact(truncate(msg, maxMessageLen))}
		return
	}
	res.E2E = end.Sub(res.Start)
	res.Server = cr.Timings.result()
	t := cr.tally(res)
	c.countTokens(res, &t, req)
}

// tally copies text and finish reason into res and returns what the answer
// generated. The whole answer counts as one text event.
func (cr *completion) tally(res *engine.Result) tally {
	t := tally{usage: cr.Usage}
	var reasoning, other strings.Builder
	for i := range cr.Choices {
		ch := &cr.Choices[i]
		if ch.Message.generated()+len(ch.Text) > 0 {
			t.textEvents = 1
		}
		if ch.Message.ReasoningContent != "" || ch.Message.Reasoning != "" {
			t.reasoningEvents = 1
		}
		if ch.Index == 0 {
			res.Text = ch.Message.Content + ch.Text
			res.FinishReason = ch.FinishReason
			ch.Message.writeText(&reasoning, &other)
		}
	}
	res.TextEvents = t.textEvents
	t.content, t.reasoning, t.other = res.Text, reasoning.String(), other.String()
	return t
}
