package traces

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"
)

// vllmSpan is request i's span with vLLM's full set of attributes.
func vllmSpan(i int) *tracepb.Span {
	tid := make([]byte, 16)
	copy(tid, fmt.Sprintf("%016d", i))
	return &tracepb.Span{
		TraceId: tid, SpanId: []byte(fmt.Sprintf("%08d", i%1e8)), Name: "llm_request",
		StartTimeUnixNano: 1, EndTimeUnixNano: 2, Kind: tracepb.Span_SPAN_KIND_SERVER,
		Attributes: []*commonpb.KeyValue{
			kv("gen_ai.response.model", str("Qwen/Qwen2.5-7B-Instruct")), kv("gen_ai.request.max_tokens", num(200)),
			kv("gen_ai.request.temperature", dbl(0.7)), kv("gen_ai.request.top_p", dbl(1)), kv("gen_ai.request.n", num(1)),
			kv(attrRequestID, str(fmt.Sprintf("chatcmpl-%d", i))), kv(attrPromptTokens, num(120)), kv(attrCompletionTokens, num(200)),
			kv(attrQueue, dbl(0.01)), kv(attrTTFT, dbl(0.2)), kv(attrE2E, dbl(3.1)),
			kv(attrPrefill, dbl(0.15)), kv(attrDecode, dbl(2.9)), kv("gen_ai.latency.time_in_model_inference", dbl(3.05)),
		},
	}
}

// BenchmarkReceive posts batches of 512 spans (the OTel SDKs' batch
// span processor's default) as OTLP/HTTP protobuf to a receiver; the
// client's CPU is in the figure too. The join is BenchmarkJoin's: the
// spans here are only counted.
func BenchmarkReceive(b *testing.B) {
	const batchSize = 512
	spans := make([]*tracepb.Span, batchSize)
	for i := range spans {
		spans[i] = vllmSpan(i)
	}
	body := exportProto(&testing.T{}, spans...)
	var delivered atomic.Int64
	r, err := Listen("127.0.0.1:0", Options{Deliver: func(Span) { delivered.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	url := "http://" + r.Addr().String() + TracesPath
	client := &http.Client{}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	cpu := cpuTime()
	for b.Loop() {
		resp, err := client.Post(url, ctProtobuf, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
	if got := delivered.Load(); got != int64(b.N*batchSize) {
		b.Fatalf("delivered %d spans, want %d", got, b.N*batchSize)
	}
}

// BenchmarkJoin is one request's sample and its span meeting in a
// Joiner, half of them span first. The trace ids outnumber
// DefaultMaxPendingSpans, so the Joiner reaches its steady state, where
// every join also forgets the oldest remembered one.
func BenchmarkJoin(b *testing.B) {
	const n = 1 << 18
	traces, requests := make([]string, n), make([]string, n)
	for i := range n {
		traces[i], requests[i] = traceHex(i), fmt.Sprintf("r%d", i)
	}
	span := spanOf(0, 0, "", time.Millisecond)
	j := NewJoiner(JoinOptions{Wait: time.Hour}, func(engine.Sample) {})
	b.ReportAllocs()
	cpu := cpuTime()
	i := 0
	for b.Loop() {
		k := i % n
		if k == 0 && i > 0 {
			j = NewJoiner(JoinOptions{Wait: time.Hour}, func(engine.Sample) {})
		}
		s := engine.Sample{Result: engine.Result{TraceID: traces[k], RequestID: requests[k]}}
		span.TraceID, span.SpanID, span.Server.RequestID = traces[k], traces[k][16:], requests[k]
		if k%2 == 0 {
			j.Sample(s)
			j.Span(span)
		} else {
			j.Span(span)
			j.Sample(s)
		}
		i++
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	j.Flush(context.Background())
}

// cpuTime is the process's CPU time, user and system, in nanoseconds: on
// a machine shared with other work, wall time per op says little.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkReceiveGRPC is BenchmarkReceive over OTLP/gRPC, vLLM's default.
func BenchmarkReceiveGRPC(b *testing.B) {
	const batchSize = 512
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{}}}}}
	for i := range batchSize {
		req.ResourceSpans[0].ScopeSpans[0].Spans = append(req.ResourceSpans[0].ScopeSpans[0].Spans, vllmSpan(i))
	}
	r, err := Listen("127.0.0.1:0", Options{Deliver: func(Span) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	// The body is marshalled once, so that the figure is the receiver's
	// more than the client's.
	body, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := grpc.NewClient(r.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{proto: encoding.GetCodecV2("proto")})))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var out coltracepb.ExportTraceServiceResponse
		if err := conn.Invoke(context.Background(), "/opentelemetry.proto.collector.trace.v1.TraceService/Export", body, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
}

// BenchmarkDecode is the wire reader alone on a batch of 512 vLLM spans.
func BenchmarkDecode(b *testing.B) {
	const batchSize = 512
	spans := make([]*tracepb.Span, batchSize)
	for i := range spans {
		spans[i] = vllmSpan(i)
	}
	body := exportProto(&testing.T{}, spans...)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var bt batch
		if err := decodeWire(body, &bt); err != nil || len(bt.spans) != batchSize {
			b.Fatal(err, len(bt.spans))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
}
