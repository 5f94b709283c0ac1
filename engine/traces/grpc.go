package traces

import (
	"context"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // OTLP/gRPC exporters may compress with gzip
	_ "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// The gRPC side reads its requests with the same wire reader as OTLP/HTTP
// rather than with the generated service's proto.Unmarshal, which cost
// several times the 2 µs a span may take: a codec hands the raw bytes of
// an Export request to the reader, and a hand-written service descriptor
// (the generated one's name and method) asks for them.

// wireExport is what the codec decodes an Export request into.
type wireExport struct {
	b   batch
	err error // an undecodable body, answered InvalidArgument
}

// wireCodec is gRPC's proto codec, except for wireExport.
type wireCodec struct{ proto encoding.CodecV2 }

func newWireCodec() wireCodec { return wireCodec{proto: encoding.GetCodecV2("proto")} }

// Marshal implements encoding.CodecV2.
func (c wireCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }

// Unmarshal implements encoding.CodecV2; the data is freed when it
// returns, so the spans are decoded (their strings copied) here.
func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	w, ok := v.(*wireExport)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	var body []byte
	if len(data) == 1 {
		body = data[0].ReadOnlyData()
	} else {
		body = data.Materialize()
	}
	w.err = decodeWire(body, &w.b)
	return nil
}

// Name implements encoding.CodecV2: it stands for the proto codec.
func (wireCodec) Name() string { return "proto" }

var traceServiceDesc = grpc.ServiceDesc{
	ServiceName: coltracepb.TraceService_ServiceDesc.ServiceName,
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: grpcExport}},
	Metadata:    coltracepb.TraceService_ServiceDesc.Metadata,
}

func grpcExport(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var w wireExport
	if err := dec(&w); err != nil {
		return nil, err
	}
	r := srv.(*Receiver)
	if w.err != nil {
		r.badRequests.Add(1)
		return nil, status.Errorf(codes.InvalidArgument, "undecodable export request: %v", w.err)
	}
	return r.take(&w.b), nil
}

// newGRPCServer is the receiver's gRPC side.
func newGRPCServer(r *Receiver, maxBytes int64) *grpc.Server {
	s := grpc.NewServer(grpc.MaxRecvMsgSize(int(maxBytes)), grpc.ForceServerCodecV2(newWireCodec()))
	s.RegisterService(&traceServiceDesc, r)
	return s
}
