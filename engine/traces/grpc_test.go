package traces

import (
	"context"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// rawCodec sends bytes as they are, to put a broken body on the wire.
type rawCodec struct{ proto encoding.CodecV2 }

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.([]byte); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return c.proto.Marshal(v)
}
func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }
func (rawCodec) Name() string                                  { return "proto" }

func TestReceiverGRPC(t *testing.T) {
	r, sink := listen(t, Options{})
	conn, err := grpc.NewClient(r.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{proto: encoding.GetCodecV2("proto")})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bad := &tracepb.Span{TraceId: traceA[:3], SpanId: spanA, Attributes: requestSpan.Attributes}
	resp, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, &coltracepb.ExportTraceServiceRequest{
		ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{requestSpan, bad}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetPartialSuccess().GetRejectedSpans(); got != 1 {
		t.Errorf("rejected = %d, want 1", got)
	}
	if got := len(sink.got()); got != 1 {
		t.Errorf("delivered %d, want 1", got)
	}

	var out coltracepb.ExportTraceServiceResponse
	err = conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", []byte{0x0a, 0x7f}, &out)
	if got := status.Code(err); got != codes.InvalidArgument {
		t.Errorf("broken body: %v, want InvalidArgument", err)
	}
	if got := r.Stats().BadRequests; got != 1 {
		t.Errorf("bad requests = %d, want 1", got)
	}
}
