package traces

import (
	"reflect"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestDecodeWireAgreesWithProto(t *testing.T) {
	spans := []*tracepb.Span{
		vllmSpan(1), vllmSpan(2), requestSpan,
		{TraceId: traceA[:5], SpanId: spanA, Attributes: requestSpan.Attributes},
		{TraceId: traceA, SpanId: spanA, Name: "other", Attributes: []*commonpb.KeyValue{kv("k", str("v"))}},
		{TraceId: traceA, SpanId: spanA, Attributes: []*commonpb.KeyValue{
			kv(attrQueue, boolean(true)), kv(attrTGIQueue, str("3ms")), kv(attrRequestID, num(5)), kv(attrE2E, nil),
			{Key: attrTTFT, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}},
		}},
	}
	body := exportProto(t, spans...)
	var wire, want batch
	if err := decodeWire(body, &wire); err != nil {
		t.Fatal(err)
	}
	req := mustUnmarshal(t, body)
	decodeExport(req, &want)
	if !reflect.DeepEqual(wire, want) {
		t.Errorf("wire reader: %+v\nproto:       %+v", wire, want)
	}
}

func TestDecodeWireMerges(t *testing.T) {
	// A KeyValue with its value in two parts, and the key after it: proto
	// merges the parts, and the reader must too.
	kvb := protowire.AppendTag(nil, fKeyValueValue, protowire.BytesType)
	kvb = protowire.AppendBytes(kvb, protowire.AppendFixed64(protowire.AppendTag(nil, fAnyDouble, protowire.Fixed64Type), 0x3ff0000000000000))
	kvb = protowire.AppendTag(kvb, fKeyValueValue, protowire.BytesType)
	kvb = protowire.AppendBytes(kvb, nil)
	kvb = protowire.AppendTag(kvb, fKeyValueKey, protowire.BytesType)
	kvb = protowire.AppendString(kvb, attrE2E)
	sp := protowire.AppendTag(nil, fSpanAttributes, protowire.BytesType)
	sp = protowire.AppendBytes(sp, kvb)
	sp = protowire.AppendTag(sp, fSpanTraceID, protowire.BytesType)
	sp = protowire.AppendBytes(sp, traceA)
	sp = protowire.AppendTag(sp, fSpanSpanID, protowire.BytesType)
	sp = protowire.AppendBytes(sp, spanA)
	ss := protowire.AppendBytes(protowire.AppendTag(nil, fScopeSpans, protowire.BytesType), sp)
	rs := protowire.AppendBytes(protowire.AppendTag(nil, fResourceScopeSpans, protowire.BytesType), ss)
	body := protowire.AppendBytes(protowire.AppendTag(nil, fExportResourceSpans, protowire.BytesType), rs)
	var wire, want batch
	if err := decodeWire(body, &wire); err != nil {
		t.Fatal(err)
	}
	decodeExport(mustUnmarshal(t, body), &want)
	if !reflect.DeepEqual(wire, want) || len(wire.spans) != 1 || wire.spans[0].Server.E2E != 1e9 {
		t.Errorf("wire reader: %+v\nproto:       %+v", wire, want)
	}
}

func TestDecodeWireErrors(t *testing.T) {
	good := exportProto(t, requestSpan)
	for name, body := range map[string][]byte{
		"truncated":     good[:len(good)-3],
		"bad tag":       {0x00},
		"long length":   {0x0a, 0x7f},
		"bad varint":    {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"nested broken": protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{0x12, 0x05, 0x01}),
	} {
		if err := decodeWire(body, &batch{}); err == nil {
			t.Errorf("%s: nil error", name)
		}
	}
}
