package traces

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// OTLP/JSON differs from protobuf's canonical JSON mapping (protojson) in
// the ids: trace and span ids are hex strings, not base64, so protojson
// would read every id wrong. These types read only what the decoder uses;
// unknown members are ignored, as the OTLP specification requires.
type (
	jsonExport struct {
		ResourceSpans []jsonResourceSpans `json:"resourceSpans"`
	}
	jsonResourceSpans struct {
		Resource   jsonResource     `json:"resource"`
		ScopeSpans []jsonScopeSpans `json:"scopeSpans"`
	}
	jsonResource struct {
		Attributes []jsonKeyValue `json:"attributes"`
	}
	jsonScopeSpans struct {
		Spans []jsonSpan `json:"spans"`
	}
	jsonSpan struct {
		TraceID    string         `json:"traceId"`
		SpanID     string         `json:"spanId"`
		Name       string         `json:"name"`
		Attributes []jsonKeyValue `json:"attributes"`
	}
	jsonKeyValue struct {
		Key   string       `json:"key"`
		Value jsonAnyValue `json:"value"`
	}
	// jsonAnyValue keeps numbers raw: an int64 may come as a string or a
	// number, a double as a number or "NaN"/"Infinity", and a bad one is a
	// malformed attribute, not an undecodable body.
	jsonAnyValue struct {
		StringValue *string         `json:"stringValue"`
		BoolValue   *bool           `json:"boolValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
	}
)

// unmarshalJSON decodes an OTLP/JSON export request into the protobuf
// types, so that both encodings share one span decoder. A bad id becomes
// an empty one, which the decoder rejects as it rejects a short binary id.
func unmarshalJSON(body []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	var in jsonExport
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("OTLP/JSON: %w", err)
	}
	out := &coltracepb.ExportTraceServiceRequest{ResourceSpans: make([]*tracepb.ResourceSpans, 0, len(in.ResourceSpans))}
	for _, rs := range in.ResourceSpans {
		prs := &tracepb.ResourceSpans{Resource: &resourcepb.Resource{Attributes: jsonAttrs(rs.Resource.Attributes)}}
		for _, ss := range rs.ScopeSpans {
			pss := &tracepb.ScopeSpans{Spans: make([]*tracepb.Span, 0, len(ss.Spans))}
			for _, sp := range ss.Spans {
				pss.Spans = append(pss.Spans, &tracepb.Span{
					TraceId: hexID(sp.TraceID), SpanId: hexID(sp.SpanID),
					Name: sp.Name, Attributes: jsonAttrs(sp.Attributes),
				})
			}
			prs.ScopeSpans = append(prs.ScopeSpans, pss)
		}
		out.ResourceSpans = append(out.ResourceSpans, prs)
	}
	return out, nil
}

func hexID(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

func jsonAttrs(in []jsonKeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, 0, len(in))
	for _, kv := range in {
		out = append(out, &commonpb.KeyValue{Key: kv.Key, Value: kv.Value.proto()})
	}
	return out
}

// proto converts the value; one the decoder cannot read (an array, a
// kvlist, bytes, a bad number) becomes a value without content, which
// every numeric and string reader treats as malformed.
func (v jsonAnyValue) proto() *commonpb.AnyValue {
	switch {
	case v.StringValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: *v.StringValue}}
	case v.BoolValue != nil:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: *v.BoolValue}}
	case v.IntValue != nil:
		if i, ok := jsonInt(v.IntValue); ok {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
		}
	case v.DoubleValue != nil:
		if f, ok := jsonDouble(v.DoubleValue); ok {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		}
	}
	return &commonpb.AnyValue{}
}

// jsonInt reads an int64 sent as a JSON string ("42", as OTLP/JSON
// writes it) or as a number (42, as many hand-written exporters do).
func jsonInt(raw json.RawMessage) (int64, bool) {
	s := string(bytes.Trim(raw, `"`))
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

func jsonDouble(raw json.RawMessage) (float64, bool) {
	switch string(raw) {
	case `"NaN"`:
		return math.NaN(), true
	case `"Infinity"`:
		return math.Inf(1), true
	case `"-Infinity"`:
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(string(bytes.Trim(raw, `"`)), 64)
	return f, err == nil
}
