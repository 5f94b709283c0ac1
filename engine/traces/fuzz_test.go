package traces

import (
	"reflect"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// checkBatch holds the decoder's account to what it decoded.
func checkBatch(t *testing.T, b *batch) {
	t.Helper()
	if b.received != len(b.spans)+b.other+b.rejected || b.malformed > len(b.spans) {
		t.Fatalf("account does not add up: received %d = spans %d + other %d + rejected %d; malformed %d",
			b.received, len(b.spans), b.other, b.rejected, b.malformed)
	}
	for _, sp := range b.spans {
		if sp.TraceID == (TraceID{}) || sp.SpanID == (SpanID{}) {
			t.Fatalf("delivered span with ids %q %q", sp.TraceID, sp.SpanID)
		}
		s := sp.Server
		for _, d := range []int64{int64(s.Queue), int64(s.Prefill), int64(s.Decode), int64(s.TTFT), int64(s.E2E)} {
			if d < -1 {
				t.Fatalf("duration %d below Absent in %+v", d, s)
			}
		}
		if s.PromptTokens < -1 || s.CompletionTokens < -1 {
			t.Fatalf("token count below -1 in %+v", s)
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(jsonExportOf(`{"traceId":"` + traceAHex + `","spanId":"` + spanAHex + `","attributes":[{"key":"gen_ai.latency.e2e","value":{"doubleValue":1}}]}`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := unmarshalJSON(body)
		if err != nil {
			return
		}
		var b batch
		decodeExport(req, &b)
		checkBatch(t, &b)
	})
}

func FuzzDecodeProto(f *testing.F) {
	seed, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	// The wire reader must agree with proto.Unmarshal on every body that
	// proto.Unmarshal takes (it may take more: it does not validate the
	// fields it skips, nor UTF-8).
	f.Fuzz(func(t *testing.T, body []byte) {
		var wire batch
		wireErr := decodeWire(body, &wire)
		if wireErr == nil {
			checkBatch(t, &wire)
		}
		var req coltracepb.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			return
		}
		var want batch
		decodeExport(&req, &want)
		checkBatch(t, &want)
		if wireErr != nil {
			t.Fatalf("wire reader: %v; proto.Unmarshal took the body", wireErr)
		}
		if !reflect.DeepEqual(normal(wire), normal(want)) {
			t.Fatalf("wire reader: %+v\nproto:       %+v", wire, want)
		}
	})
}

// normal makes an empty span list and a missing one alike.
func normal(b batch) batch {
	if len(b.spans) == 0 {
		b.spans = nil
	}
	return b
}
