package sim

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sashabaranov/go-openai"
)

// OpenAI error types.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeServer         = "server_error"
)

// apiError is an error the server answers with, in OpenAI's shape:
// {"error":{"message":...,"type":...,"param":...,"code":<status>}}.
type apiError struct {
	status  int
	typ     string
	param   string // the offending request field, if any
	message string
	kind    string // the dirty-data kind it answers, "" for none
}

// as sets the dirty-data kind e answers and returns e.
func (e *apiError) as(kind string) *apiError {
	e.kind = kind
	return e
}

func (e *apiError) Error() string { return e.message }

func newAPIError(status int, param, format string, args ...any) *apiError {
	typ := typeInvalidRequest
	switch {
	case status == http.StatusUnauthorized:
		typ = typeAuthentication
	case status >= 500:
		typ = typeServer
	}
	return &apiError{status: status, typ: typ, param: param, message: fmt.Sprintf(format, args...)}
}

func badRequest(param, format string, args ...any) *apiError {
	return newAPIError(http.StatusBadRequest, param, format, args...)
}

// write sends e as the whole response.
func (e *apiError) write(w http.ResponseWriter) {
	body := openai.ErrorResponse{Error: &openai.APIError{
		Code:    e.status,
		Message: e.message,
		Type:    e.typ,
	}}
	if e.param != "" {
		body.Error.Param = &e.param
	}
	writeJSON(w, e.status, body)
}

// writeJSON sends v with status. A failed write means the client is gone,
// which a server can only ignore.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// quoteShort quotes user input for an error message, cut so that a huge
// field does not make a huge error.
func quoteShort(s string) string {
	const limit = 64
	if len(s) > limit {
		return fmt.Sprintf("%q...", s[:limit])
	}
	return fmt.Sprintf("%q", s)
}
