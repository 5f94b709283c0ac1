package openai

import (
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"

	gojson "github.com/goccy/go-json"
)

// W3C Trace Context (https://www.w3.org/TR/trace-context/): a request
// carries "traceparent: 00-<trace id>-<parent id>-01", a new trace id per
// request and the sampled flag set, so that a server that traces (vLLM's
// --otlp-traces-endpoint) continues the trace and its span can be joined
// to the request by the id.
const (
	traceparentHeader = "Traceparent"
	traceparentLen    = 55 // "00-" 32 "-" 16 "-01"
)

// newTraceparent returns a traceparent header value with fresh ids, and
// its trace id (a substring of it, so no second allocation). The ids
// need to be unique, not secret: the runtime's per-thread generator
// (ChaCha8-seeded) is cheap and safe for concurrent use; an all-zero id,
// which the spec forbids, is drawn again.
func newTraceparent() (header, traceID string) {
	var b [traceparentLen]byte
	var ids [24]byte
	for {
		putUint64(ids[0:8], rand.Uint64())
		putUint64(ids[8:16], rand.Uint64())
		putUint64(ids[16:24], rand.Uint64())
		if !allZero(ids[0:16]) && !allZero(ids[16:24]) {
			break
		}
	}
	copy(b[0:3], "00-")
	hex.Encode(b[3:35], ids[0:16])
	b[35] = '-'
	hex.Encode(b[36:52], ids[16:24])
	copy(b[52:], "-01")
	header = string(b[:])
	return header, header[3:35]
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// traceIDOf is the trace id of a traceparent value the user set (a target
// or request header), "" when it is not a valid version-00 traceparent:
// the request goes as the user wrote it, but llmload cannot join a span
// to an id it cannot read.
func traceIDOf(v string) string {
	v = strings.TrimSpace(v)
	if len(v) < traceparentLen || v[2] != '-' || v[35] != '-' || v[52] != '-' || v[:2] == "ff" {
		return ""
	}
	if len(v) > traceparentLen && (v[:2] == "00" || v[traceparentLen] != '-') {
		return ""
	}
	id := v[3:35]
	if !isLowerHex(v[:2]) || !isLowerHex(id) || !isLowerHex(v[36:52]) || !isLowerHex(v[53:55]) ||
		id == zeroTraceID || v[36:52] == zeroTraceID[:16] {
		return ""
	}
	return id
}

const zeroTraceID = "00000000000000000000000000000000"

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// setTraceparent puts a fresh traceparent on h unless trace context is
// off or the request already carries one (the user's own, from the
// target's or the request's headers); it returns the trace id the
// request carries, "" when none that llmload can read.
func (c *Client) setTraceparent(h http.Header) string {
	if v, ok := h[traceparentHeader]; ok {
		if len(v) == 1 {
			return traceIDOf(v[0])
		}
		return ""
	}
	if c.noTrace {
		return ""
	}
	header, id := newTraceparent()
	h[traceparentHeader] = []string{header}
	return id
}

// maxRequestIDLen bounds a server's request id kept per request: longer
// ones are not ids a human or a join needs, and each record holds one.
const maxRequestIDLen = 256

// headerRequestID is the server's request id from its response headers:
// x-request-id (OpenAI, vLLM with --enable-request-id-headers, most
// gateways), request-id (Anthropic), or another "<prefix>-request-id";
// "" when none.
func headerRequestID(h http.Header) string {
	if v := h.Get("X-Request-Id"); v != "" {
		return clipID(v)
	}
	if v := h.Get("Request-Id"); v != "" {
		return clipID(v)
	}
	// The first by name, so that a server sending two gives one answer.
	best := ""
	for name, vs := range h {
		if len(vs) > 0 && vs[0] != "" && strings.HasSuffix(name, "-Request-Id") && (best == "" || name < best) {
			best = name
		}
	}
	if best == "" {
		return ""
	}
	return clipID(h[best][0])
}

func clipID(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > maxRequestIDLen {
		return ""
	}
	return v
}

// answerID is the top-level id member of an answer or of a stream's first
// event: a chat or completions chunk's "id", a Responses event's
// response.id, a Messages message_start's message.id. It decodes only
// those members, once per request; "" when there is none.
func answerID(data []byte) string {
	// An id that is not a string fails the decode, and is no id.
	var a struct {
		ID       string            `json:"id"`
		Response gojson.RawMessage `json:"response"`
		Message  gojson.RawMessage `json:"message"`
	}
	if gojson.Unmarshal(data, &a) != nil {
		return ""
	}
	if a.ID != "" {
		return clipID(a.ID)
	}
	for _, inner := range []gojson.RawMessage{a.Response, a.Message} {
		if len(inner) > 0 && inner[0] == '{' {
			var o struct {
				ID gojson.RawMessage `json:"id"`
			}
			if gojson.Unmarshal(inner, &o) == nil {
				if id := stringID(o.ID); id != "" {
					return id
				}
			}
		}
	}
	return ""
}

// stringID is a JSON string's value, "" for anything else.
func stringID(raw gojson.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if gojson.Unmarshal(raw, &s) != nil {
		return ""
	}
	return clipID(s)
}
