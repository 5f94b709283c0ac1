package traces

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestRealExporters sends spans with the OTel Go SDK's own exporters, as a
// server continuing each request's traceparent would, and joins them.
func TestRealExporters(t *testing.T) {
	exporters := map[string]func(ctx context.Context, addr string) (sdktrace.SpanExporter, error){
		"http protobuf": func(ctx context.Context, addr string) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
		},
		"http gzip": func(ctx context.Context, addr string) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure(),
				otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		},
		"grpc": func(ctx context.Context, addr string) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure())
		},
		"grpc gzip": func(ctx context.Context, addr string) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithCompressor("gzip"))
		},
	}
	for name, newExporter := range exporters {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var c collector
			j := NewJoiner(JoinOptions{Wait: 20 * time.Second}, c.next)
			r, err := Listen("127.0.0.1:0", Options{Deliver: j.Span})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			exp, err := newExporter(ctx, r.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
				sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "vllm"))))
			const n = 20
			for i := range n {
				if i%2 == 0 {
					j.Sample(sampleOf(i, fmt.Sprintf("cmpl-%d", i)))
				}
				serverSpan(ctx, t, tp.Tracer("vllm.llm_engine"), i)
			}
			if err := tp.Shutdown(ctx); err != nil { // exports every span
				t.Fatal(err)
			}
			for i := 1; i < n; i += 2 {
				j.Sample(sampleOf(i, fmt.Sprintf("cmpl-%d", i)))
			}
			j.Flush(ctx)
			checkJoined(t, c.samples(), n)
			st := j.Stats().WithReceiver(r.Stats())
			if st.Joined != n || st.Received != n+1 || st.Other != 1 || st.Spans != n {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

// serverSpan exports request i's span as vLLM does: a child of the
// client's traceparent, with the request's attributes; and one span that
// is not a request span.
func serverSpan(ctx context.Context, t *testing.T, tr trace.Tracer, i int) {
	t.Helper()
	tid, err := trace.TraceIDFromHex(traceHex(i))
	if err != nil {
		t.Fatal(err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true})
	_, sp := tr.Start(trace.ContextWithRemoteSpanContext(ctx, parent), "llm_request", trace.WithSpanKind(trace.SpanKindServer))
	sp.SetAttributes(
		attribute.String(attrRequestID, fmt.Sprintf("cmpl-%d", i)),
		attribute.Float64(attrQueue, float64(i)/1000),
		attribute.Float64(attrTTFT, 0.5),
		attribute.Int(attrPromptTokens, 100+i),
	)
	sp.End()
	if i == 0 {
		_, other := tr.Start(ctx, "scheduler step")
		other.End()
	}
}

func checkJoined(t *testing.T, out []engine.Sample, n int) {
	t.Helper()
	if len(out) != n {
		t.Fatalf("passed on %d samples, want %d", len(out), n)
	}
	for _, s := range out {
		var i int
		if _, err := fmt.Sscanf(s.RequestID, "cmpl-%d", &i); err != nil {
			t.Fatal(err)
		}
		if s.Span == nil {
			t.Errorf("sample %d: no span", i)
			continue
		}
		want := absent()
		want.RequestID, want.Queue, want.TTFT, want.PromptTokens = s.RequestID, time.Duration(i)*time.Millisecond, 500*time.Millisecond, 100+i
		if *s.Span != want {
			t.Errorf("sample %d: span %+v\nwant %+v", i, *s.Span, want)
		}
	}
}
