package traces

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span is one request span a server exported: its W3C ids and what it
// says the server did with the request.
type Span struct {
	TraceID TraceID
	SpanID  SpanID
	Server  engine.ServerSpan
}

// TraceID is a W3C trace id's 16 bytes. The ids are kept as bytes, not
// hex: the join keys on them, and hex would cost every span an
// allocation and an encoding.
type TraceID [16]byte

// SpanID is a W3C span id's 8 bytes.
type SpanID [8]byte

// String is the id in lowercase hex, as traceparent carries it.
func (t TraceID) String() string { return hex.EncodeToString(t[:]) }

// String is the id in lowercase hex, as traceparent carries it.
func (s SpanID) String() string { return hex.EncodeToString(s[:]) }

// ParseTraceID reads a trace id of 32 hex digits, in either case; ok is
// false for anything else.
func ParseTraceID(id string) (t TraceID, ok bool) {
	if len(id) != 32 {
		return t, false
	}
	for i := range t {
		hi, ok1 := nibble(id[2*i])
		lo, ok2 := nibble(id[2*i+1])
		if !ok1 || !ok2 {
			return t, false
		}
		t[i] = hi<<4 | lo
	}
	return t, true
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// spanWithIDs is a request span with the ids given as bytes, which the
// decoders checked are 16 and 8 long.
func spanWithIDs(traceID, spanID []byte, s engine.ServerSpan) Span {
	sp := Span{Server: s}
	copy(sp.TraceID[:], traceID)
	copy(sp.SpanID[:], spanID)
	return sp
}

// The attribute names of vLLM's request span ("llm_request"), from
// SpanAttributes in vllm/tracing.py (vllm-project/vllm at commit
// 03b8a674): latencies are float seconds, token counts integers.
const (
	attrRequestID        = "gen_ai.request.id"
	attrQueue            = "gen_ai.latency.time_in_queue"
	attrTTFT             = "gen_ai.latency.time_to_first_token"
	attrE2E              = "gen_ai.latency.e2e"
	attrPrefill          = "gen_ai.latency.time_in_model_prefill"
	attrDecode           = "gen_ai.latency.time_in_model_decode"
	attrPromptTokens     = "gen_ai.usage.prompt_tokens"
	attrCompletionTokens = "gen_ai.usage.completion_tokens"
)

// TGI's router records its "generate" and "generate_stream" spans' timings
// as Rust Debug durations in strings ("1.234ms", "850µs"), not numbers:
// huggingface/text-generation-inference router/src/server.rs at commit
// 003eaec0 (span.record("queue_time", format!("{queue_time:?}"))).
// total_time runs from the router's receipt of the request to its end, the
// server's E2E; inference_time (prefill and decode together) has no field.
const (
	attrTGIQueue = "queue_time"
	attrTGITotal = "total_time"
)

const attrServiceName = "service.name"

// spanKind is what the decoder made of one span.
type spanKind int

const (
	kindRequest  spanKind = iota // a request span, delivered
	kindOther                    // no request attribute: not a request span
	kindRejected                 // bad trace or span id: not delivered
)

// batch is the decoder's account of one export request.
type batch struct {
	spans     []Span
	received  int
	other     int
	rejected  int
	malformed int // delivered spans with at least one bad attribute value
}

// decodeExport turns an export request into its request spans, appending
// to b.
func decodeExport(req *coltracepb.ExportTraceServiceRequest, b *batch) {
	for _, rs := range req.GetResourceSpans() {
		service := serviceName(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				b.received++
				out, kind, bad := decodeSpan(sp, service)
				switch kind {
				case kindRequest:
					b.spans = append(b.spans, out)
					if bad {
						b.malformed++
					}
				case kindOther:
					b.other++
				case kindRejected:
					b.rejected++
				}
			}
		}
	}
}

func serviceName(attrs []*commonpb.KeyValue) string {
	for _, kv := range attrs {
		if kv.GetKey() == attrServiceName {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// decodeSpan maps one span; bad says a request attribute had a value it
// could not use (that field is left Absent).
func decodeSpan(sp *tracepb.Span, service string) (Span, spanKind, bool) {
	if !validID(sp.GetTraceId(), 16) || !validID(sp.GetSpanId(), 8) {
		return Span{}, kindRejected, false
	}
	s := newServerSpan(service, sp.GetName())
	known, bad := false, false
	for _, kv := range sp.GetAttributes() {
		if knownKey(kv.GetKey()) {
			known = true
			bad = !applyAttr(&s, kv.GetKey(), protoValue(kv.GetValue())) || bad
		}
	}
	if !known {
		return Span{}, kindOther, false
	}
	return spanWithIDs(sp.GetTraceId(), sp.GetSpanId(), s), kindRequest, bad
}

// value is an attribute's value, read from either encoding without
// copying: only the kinds the request attributes use are told apart.
type value struct {
	kind valueKind
	s    string
	i    int64
	f    float64
}

type valueKind uint8

const (
	valueOther valueKind = iota // missing, bool, array, kvlist, bytes
	valueString
	valueInt
	valueDouble
)

func protoValue(v *commonpb.AnyValue) value {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return value{kind: valueString, s: x.StringValue}
	case *commonpb.AnyValue_IntValue:
		return value{kind: valueInt, i: x.IntValue}
	case *commonpb.AnyValue_DoubleValue:
		return value{kind: valueDouble, f: x.DoubleValue}
	}
	return value{}
}

// knownKey reports a request attribute.
func knownKey(key string) bool { return requestAttr(key) != "" }

// requestAttr is the request attribute named key, "" for another key:
// the wire reader takes its constant instead of copying the key.
func requestAttr[K string | []byte](key K) string {
	switch string(key) { // for []byte, compared without a copy
	case attrRequestID:
		return attrRequestID
	case attrPromptTokens:
		return attrPromptTokens
	case attrCompletionTokens:
		return attrCompletionTokens
	case attrTGIQueue:
		return attrTGIQueue
	case attrTGITotal:
		return attrTGITotal
	case attrQueue:
		return attrQueue
	case attrTTFT:
		return attrTTFT
	case attrE2E:
		return attrE2E
	case attrPrefill:
		return attrPrefill
	case attrDecode:
		return attrDecode
	}
	return ""
}

// applyAttr sets the field a request attribute names; ok reports whether
// its value was usable.
func applyAttr(s *engine.ServerSpan, key string, v value) (ok bool) {
	var d *time.Duration
	switch key {
	case attrRequestID:
		s.RequestID, ok = requestID(v)
		return ok
	case attrPromptTokens:
		s.PromptTokens, ok = tokens(v)
		return ok
	case attrCompletionTokens:
		s.CompletionTokens, ok = tokens(v)
		return ok
	case attrTGIQueue:
		s.Queue, ok = rustDuration(v)
		return ok
	case attrTGITotal:
		s.E2E, ok = rustDuration(v)
		return ok
	case attrQueue:
		d = &s.Queue
	case attrTTFT:
		d = &s.TTFT
	case attrE2E:
		d = &s.E2E
	case attrPrefill:
		d = &s.Prefill
	case attrDecode:
		d = &s.Decode
	default:
		return true
	}
	*d, ok = seconds(v)
	return ok
}

// newServerSpan is a span with nothing measured yet.
func newServerSpan(service, name string) engine.ServerSpan {
	return engine.ServerSpan{
		Service: service, Name: name,
		Queue: engine.Absent, Prefill: engine.Absent, Decode: engine.Absent,
		TTFT: engine.Absent, E2E: engine.Absent,
		PromptTokens: -1, CompletionTokens: -1,
	}
}

func validID(id []byte, n int) bool {
	if len(id) != n {
		return false
	}
	for _, c := range id {
		if c != 0 {
			return true
		}
	}
	return false // the all-zero id is invalid in W3C trace context
}

// number reads a numeric attribute, sent as a double, an int or a numeric
// string depending on the exporter's language.
func number(v value) (float64, bool) {
	var f float64
	switch v.kind {
	case valueDouble:
		f = v.f
	case valueInt:
		f = float64(v.i)
	case valueString:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(v.s), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}

// maxSeconds keeps a duration inside time.Duration's range.
const maxSeconds = float64(math.MaxInt64) / 1e9

func seconds(v value) (time.Duration, bool) {
	f, ok := number(v)
	if !ok || f >= maxSeconds {
		return engine.Absent, false
	}
	return time.Duration(math.Round(f * 1e9)), true
}

func tokens(v value) (int, bool) {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f > math.MaxInt32 {
		return -1, false
	}
	return int(f), true
}

func requestID(v value) (string, bool) {
	switch v.kind {
	case valueString:
		return v.s, v.s != ""
	case valueInt:
		return strconv.FormatInt(v.i, 10), true
	}
	return "", false
}

// rustDuration reads a Rust Debug-formatted duration ("1.5ms", "20µs",
// "3.2s"), which Go's duration syntax happens to cover.
func rustDuration(v value) (time.Duration, bool) {
	if v.kind != valueString {
		return engine.Absent, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(v.s))
	if err != nil || d < 0 {
		return engine.Absent, false
	}
	return d, true
}
