package sim

import (
	"net/http"
)

// apiKind is the API a request came by. It shapes the answer, its errors
// and its ids; generation is the same for every API.
type apiKind uint8

const (
	apiChat          apiKind = iota // POST /v1/chat/completions
	apiText                         // the legacy POST /v1/completions
	apiResponses                    // OpenAI's POST /v1/responses
	apiMessages                     // Anthropic's POST /v1/messages
	apiEmbeddings                   // POST /v1/embeddings
	apiTranscription                // POST /v1/audio/transcriptions
)

// idPrefix starts the ids of the API's answers, as the real ones do.
func (a apiKind) idPrefix() string {
	switch a {
	case apiText:
		return "cmpl"
	case apiResponses:
		return "resp"
	case apiMessages:
		return "msg"
	case apiEmbeddings:
		return "embd"
	case apiTranscription:
		return "trsc"
	}
	return "chatcmpl"
}

// keyHint is the 401 message of the API: how it wants the key.
func (a apiKind) keyHint() string {
	if a == apiMessages {
		return "invalid or missing API key: send \"x-api-key: <key>\""
	}
	return "invalid or missing API key: send \"Authorization: Bearer <key>\""
}

// anthropicTypes are the Messages API's error types by status.
var anthropicTypes = map[int]string{
	http.StatusBadRequest:            "invalid_request_error",
	http.StatusUnauthorized:          "authentication_error",
	http.StatusForbidden:             "permission_error",
	http.StatusNotFound:              "not_found_error",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusTooManyRequests:       "rate_limit_error",
	StatusOverloaded:                 "overloaded_error",
}

// StatusOverloaded is Anthropic's status for an overloaded server.
const StatusOverloaded = 529

// anthropicType is the Messages API's error type of a status.
func anthropicType(status int) string {
	if t, ok := anthropicTypes[status]; ok {
		return t
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// anthropicErrorBody is the Messages API's error object.
type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anthropic is e in the Messages API's shape.
func (e *apiError) anthropic() anthropicErrorBody {
	b := anthropicErrorBody{Type: "error"}
	b.Error.Type, b.Error.Message = anthropicType(e.status), e.message
	return b
}

// writeFor sends e as the whole response, in the shape of api.
func (e *apiError) writeFor(w http.ResponseWriter, api apiKind) {
	if api != apiMessages {
		e.write(w)
		return
	}
	writeJSON(w, e.status, e.anthropic())
}
