package openai

import (
	"net/http"

	"github.com/llmload/llmload/engine"
)

// dialect is one protocol an inference server speaks: chat completions,
// legacy completions, OpenAI's Responses, Anthropic's Messages,
// embeddings. The client shares everything else between them: the
// request's flow, stamping, timeouts, the SSE reader, the stream loop and
// the error classes. A dialect only builds the body and interprets what
// comes back. Dialects are stateless values, safe for concurrent use; a
// stream's state lives in stream.
type dialect interface {
	// url is where requests of this dialect go.
	url(c *Client) string
	// body encodes req; continuous asks for usage in every chunk where
	// the dialect can.
	body(req *engine.ChatRequest, continuous bool) ([]byte, error)
	// auth sets the credentials on a request's headers.
	auth(c *Client, h http.Header)
	// event interprets one event of a stream: it writes the text the event
	// carried into s's builders, keeps usage, tool calls and the finish
	// reason, marks the end of the stream (s.done, s.finished) and says
	// what the event carried for the timings; a non-nil error ends the
	// request as a failure.
	event(s *stream, ev event) (delta, *engine.Error)
	// cutEnd reports whether an event cut off by the end of the body (no
	// blank line after it) is this dialect's last event, which ends the
	// stream as a complete one.
	cutEnd(data []byte) bool
	// endName names what a complete stream ends with, for a truncation's
	// message.
	endName() string
	// complete interprets a whole (non-streamed) answer to req: it fills
	// res, token counts included.
	complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error
	// prompt is the text req sends as a chat or completions request, for
	// the offline count of its input tokens (see countTokens).
	prompt(req *engine.ChatRequest) *engine.ChatRequest
}

// delta is what one event carried, for the timings: gen bytes of generated
// text, of which some were answer text (content) rather than reasoning,
// and the tokens per-chunk usage says it added (-1: unknown).
type delta struct {
	gen     int
	content bool
	tokens  int
}

// noText is an event that carried no generated text.
var noText = delta{tokens: -1}

// dialects by endpoint.
var dialects = map[string]dialect{
	engine.EndpointChat:        chatDialect{},
	engine.EndpointCompletions: chatDialect{completions: true},
	engine.EndpointResponses:   responsesDialect{},
	engine.EndpointMessages:    messagesDialect{},
	engine.EndpointEmbeddings:  embeddingsDialect{},

	engine.EndpointTranscriptions: transcriptionsDialect{},
	engine.EndpointSpeech:         speechDialect{},
}

// dialectOf returns the dialect of req's endpoint, nil for an unknown one.
func dialectOf(req *engine.ChatRequest) dialect {
	if req.Endpoint == "" {
		return chatDialect{}
	}
	return dialects[req.Endpoint]
}

// bearer sets the API key as Config.Auth says: by default as
// "Authorization: Bearer", the OpenAI way.
func bearer(c *Client, h http.Header) { c.cred.set(h) }
