package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/llmload/llmload/engine"
)

// maxMessageLen bounds error messages taken from server bodies.
const maxMessageLen = 200

// phase tells the classifier whether a response had begun: the same EOF
// means a reset connection before it and a truncated stream after it.
type phase int

const (
	phaseRequest phase = iota // before the response headers
	phaseBody                 // reading the response body
)

// classify turns a transport error into a classified failure. parent is the
// caller's context and ctx the request's own, canceled by the watchdog.
func classify(parent, ctx context.Context, err error, p phase, t timeouts) *engine.Error {
	if parent.Err() != nil {
		return &engine.Error{Class: engine.ErrCanceled, Message: context.Cause(parent).Error()}
	}
	var tc *timeoutCause
	if errors.As(context.Cause(ctx), &tc) {
		return &engine.Error{Class: tc.class, Message: timeoutMessage(tc, t)}
	}
	return &engine.Error{Class: netClass(err, p), Message: innerMessage(err)}
}

// netClass classifies an error that no deadline of ours caused.
func netClass(err error, p phase) string {
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return engine.ErrConnRefused
	case errors.As(err, &op) && op.Op == "dial" && op.Timeout(), isHandshakeTimeout(err):
		return engine.ErrTimeoutConnect
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		return engine.ErrConnReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if p == phaseBody {
			return engine.ErrStreamTruncated
		}
		return engine.ErrConnReset
	}
	return engine.ErrNetwork
}

// isHandshakeTimeout spots net/http's TLS handshake timeout, which has no
// exported type; it is part of connecting, like the dial.
func isHandshakeTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout() && strings.Contains(err.Error(), "TLS handshake")
}

func timeoutMessage(tc *timeoutCause, t timeouts) string {
	switch tc {
	case causeTTFT:
		return "no text within " + t.ttft.String()
	case causeIdle:
		return "no event for " + t.idle.String()
	case causeTotal:
		return "request took longer than " + t.total.String()
	}
	return tc.class
}

// innerMessage drops the "Post URL:" prefix of a url.Error: the URL is
// known to the user and may carry credentials.
func innerMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// serverMessage extracts the human message from an error body, on one
// line and truncated (see serverText).
func serverMessage(body []byte) string { return oneLine(serverText(body)) }

// oneLine collapses whitespace and truncates a message to maxMessageLen.
func oneLine(msg string) string {
	return truncate(strings.Join(strings.Fields(msg), " "), maxMessageLen)
}

// serverText extracts the human message from an error body in any of
// the shapes OpenAI-compatible servers use: {"error":{"message":...}},
// {"error":"..."}, {"message":...} and FastAPI's {"detail":...}, and
// Anthropic's {"type":"error","error":{"type":...,"message":...}}, whose
// error type leads its message. It falls back to the body itself.
func serverText(body []byte) string {
	var e struct {
		Type    string          `json:"type"`
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		msg = firstText(errorText(e.Error), rawText(e.Message), rawText(e.Detail))
		if e.Type == "error" && len(e.Error) > 0 && e.Error[0] == '{' {
			msg = anthropicError(e.Error)
		}
	}
	if msg == "" {
		msg = string(body)
	}
	return msg
}

// errorText reads an "error" member: an object with a message, or a string.
func errorText(raw json.RawMessage) string {
	var obj struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Message) > 0 {
		return rawText(obj.Message)
	}
	return rawText(raw)
}

// rawText returns a JSON string's value, or any other non-null JSON value as compact text.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

func firstText(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
