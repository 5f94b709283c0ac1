package traces

import (
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func dbl(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}
func num(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}
func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}
func boolean(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}
func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

var (
	traceA = []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	spanA  = []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

const (
	traceAHex = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanAHex  = "00f067aa0ba902b7"
)

// absent is a ServerSpan with nothing measured, the base of the wants.
func absent() engine.ServerSpan {
	return engine.ServerSpan{
		Service: "vllm", Name: "llm_request",
		Queue: engine.Absent, Prefill: engine.Absent, Decode: engine.Absent, TTFT: engine.Absent, E2E: engine.Absent,
		PromptTokens: -1, CompletionTokens: -1,
	}
}

func TestDecodeSpanAttributes(t *testing.T) {
	tests := map[string]struct {
		attrs []*commonpb.KeyValue
		kind  spanKind
		bad   bool
		want  func(*engine.ServerSpan)
	}{
		"vllm doubles": {
			attrs: []*commonpb.KeyValue{
				kv(attrRequestID, str("chatcmpl-1")), kv(attrQueue, dbl(0.25)), kv(attrTTFT, dbl(0.5)),
				kv(attrE2E, dbl(2)), kv(attrPrefill, dbl(0.125)), kv(attrDecode, dbl(1.5)),
				kv(attrPromptTokens, num(12)), kv(attrCompletionTokens, num(34)),
			},
			want: func(s *engine.ServerSpan) {
				s.RequestID, s.Queue, s.TTFT, s.E2E = "chatcmpl-1", 250*time.Millisecond, 500*time.Millisecond, 2*time.Second
				s.Prefill, s.Decode, s.PromptTokens, s.CompletionTokens = 125*time.Millisecond, 1500*time.Millisecond, 12, 34
			},
		},
		"ints and numeric strings": {
			attrs: []*commonpb.KeyValue{
				kv(attrQueue, num(1)), kv(attrTTFT, str(" 0.003 ")), kv(attrPromptTokens, str("7")),
				kv(attrCompletionTokens, dbl(9)), kv(attrRequestID, num(42)),
			},
			want: func(s *engine.ServerSpan) {
				s.Queue, s.TTFT, s.PromptTokens, s.CompletionTokens, s.RequestID = time.Second, 3*time.Millisecond, 7, 9, "42"
			},
		},
		"zero is measured, not absent": {
			attrs: []*commonpb.KeyValue{kv(attrQueue, dbl(0))},
			want:  func(s *engine.ServerSpan) { s.Queue = 0 },
		},
		"non-numeric string": {
			attrs: []*commonpb.KeyValue{kv(attrQueue, str("fast")), kv(attrE2E, dbl(1))},
			bad:   true,
			want:  func(s *engine.ServerSpan) { s.E2E = time.Second },
		},
		"negative": {
			attrs: []*commonpb.KeyValue{kv(attrTTFT, dbl(-0.1)), kv(attrPromptTokens, num(-3))},
			bad:   true,
			want:  func(*engine.ServerSpan) {},
		},
		"bool, fractional tokens, empty id": {
			attrs: []*commonpb.KeyValue{kv(attrDecode, boolean(true)), kv(attrCompletionTokens, dbl(2.5)), kv(attrRequestID, str(""))},
			bad:   true,
			want:  func(*engine.ServerSpan) {},
		},
		"huge seconds": {
			attrs: []*commonpb.KeyValue{kv(attrE2E, dbl(1e300))},
			bad:   true,
			want:  func(*engine.ServerSpan) {},
		},
		"value missing": {
			attrs: []*commonpb.KeyValue{kv(attrQueue, nil)},
			bad:   true,
			want:  func(*engine.ServerSpan) {},
		},
		"tgi durations": {
			attrs: []*commonpb.KeyValue{kv(attrTGIQueue, str("1.5ms")), kv(attrTGITotal, str("2.25s")), kv("inference_time", str("2s"))},
			want:  func(s *engine.ServerSpan) { s.Queue, s.E2E = 1500*time.Microsecond, 2250*time.Millisecond },
		},
		"tgi micro sign and bad": {
			attrs: []*commonpb.KeyValue{kv(attrTGIQueue, str("850µs")), kv(attrTGITotal, dbl(2))},
			bad:   true,
			want:  func(s *engine.ServerSpan) { s.Queue = 850 * time.Microsecond },
		},
		"no request attribute": {
			attrs: []*commonpb.KeyValue{kv("http.method", str("POST")), kv("gen_ai.request.model", str("m"))},
			kind:  kindOther,
		},
		"no attribute at all": {kind: kindOther},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, kind, bad := decodeSpan(&tracepb.Span{TraceId: traceA, SpanId: spanA, Name: "llm_request", Attributes: tt.attrs}, "vllm")
			if kind != tt.kind || bad != tt.bad {
				t.Fatalf("kind, bad = %v, %v; want %v, %v", kind, bad, tt.kind, tt.bad)
			}
			if kind != kindRequest {
				return
			}
			want := absent()
			tt.want(&want)
			if got.Server != want {
				t.Errorf("span = %+v\nwant   %+v", got.Server, want)
			}
			if got.TraceID.String() != traceAHex || got.SpanID.String() != spanAHex {
				t.Errorf("ids = %s %s", got.TraceID, got.SpanID)
			}
		})
	}
}

func TestDecodeSpanIDs(t *testing.T) {
	tests := map[string]struct {
		trace, span []byte
		kind        spanKind
	}{
		"valid":       {traceA, spanA, kindRequest},
		"short trace": {traceA[:8], spanA, kindRejected},
		"long span":   {traceA, traceA, kindRejected},
		"zero trace":  {make([]byte, 16), spanA, kindRejected},
		"zero span":   {traceA, make([]byte, 8), kindRejected},
		"no ids":      {nil, nil, kindRejected},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, kind, _ := decodeSpan(&tracepb.Span{TraceId: tt.trace, SpanId: tt.span, Attributes: []*commonpb.KeyValue{kv(attrQueue, dbl(1))}}, "")
			if kind != tt.kind {
				t.Errorf("kind = %v, want %v", kind, tt.kind)
			}
		})
	}
}

func TestDecodeExportCounts(t *testing.T) {
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv(attrServiceName, str("vllm"))}},
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{
			{TraceId: traceA, SpanId: spanA, Name: "llm_request", Attributes: []*commonpb.KeyValue{kv(attrE2E, dbl(1))}},
			{TraceId: traceA, SpanId: spanA, Attributes: []*commonpb.KeyValue{kv(attrE2E, str("x"))}},
			{TraceId: traceA, SpanId: spanA, Name: "http"},
			{TraceId: nil, SpanId: spanA},
		}}},
	}}}
	var b batch
	decodeExport(req, &b)
	if b.received != 4 || len(b.spans) != 2 || b.other != 1 || b.rejected != 1 || b.malformed != 1 {
		t.Errorf("batch = received %d spans %d other %d rejected %d malformed %d; want 4 2 1 1 1",
			b.received, len(b.spans), b.other, b.rejected, b.malformed)
	}
	if got := b.spans[0].Server.Service; got != "vllm" {
		t.Errorf("service = %q, want vllm", got)
	}
}
