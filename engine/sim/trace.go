package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP protocols Config.OTLPTracesProtocol accepts, spelled as
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL spells them.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// EnvTracesProtocol is the variable vLLM (vllm/tracing/otel.py,
// get_span_exporter) reads to choose its span exporter's protocol.
const EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"

// TraceServiceName is the service.name of the simulator's spans' resource.
const TraceServiceName = "llmload-sim"

// SpanName is the name of each request's span, vLLM's.
const SpanName = "llm_request"

// vLLM's span attribute names (vllm/tracing/utils.py SpanAttributes at
// commit 0bf3270f; set in vllm/v1/engine/output_processor.py do_tracing
// at commit d0782260). Latencies are float seconds, counts integers.
const (
	AttrRequestID        = "gen_ai.request.id"
	AttrPromptTokens     = "gen_ai.usage.prompt_tokens"
	AttrCompletionTokens = "gen_ai.usage.completion_tokens"
	AttrMaxTokens        = "gen_ai.request.max_tokens"
	AttrResponseModel    = "gen_ai.response.model"
	AttrFinishReasons    = "gen_ai.response.finish_reasons"
	AttrQueue            = "gen_ai.latency.time_in_queue"
	AttrTTFT             = "gen_ai.latency.time_to_first_token"
	AttrE2E              = "gen_ai.latency.e2e"
	AttrPrefill          = "gen_ai.latency.time_in_model_prefill"
	AttrDecode           = "gen_ai.latency.time_in_model_decode"
	AttrInference        = "gen_ai.latency.time_in_model_inference"
)

// Bounds of span export: one export's attempts (retries included), and
// how long Close waits for the queued spans to leave. An endpoint that does
// not answer costs Close at most traceFlushWait more.
const (
	traceExportTimeout = 5 * time.Second
	traceFlushWait     = 5 * time.Second
)

// SpanStats counts the spans of Config.OTLPTracesEndpoint. Before Close,
// Ended − Exported − Failed are spans still queued (or dropped); Dropped
// is known only after Close.
type SpanStats struct {
	Ended    int64 // spans ended: one per request the caller's trace did not leave unsampled
	Exported int64 // of those, accepted by the endpoint
	Failed   int64 // handed to the exporter, which could not deliver them
	// Dropped were never handed to the exporter: the batch queue was
	// full, or still held them when Close's flush timed out.
	Dropped int64
	// LastError is the last export error, "" when none.
	LastError string
}

// tracesEndpoint checks an endpoint and spells it as a URL: a bare
// host:port is plain http, and an http/protobuf URL without a path posts
// to /v1/traces, the OTLP path, since no collector listens on "/".
func tracesEndpoint(raw, protocol string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("traces endpoint %q: %w", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("traces endpoint %q: scheme %q; expected http or https", raw, u.Scheme)
	case u.Host == "":
		return "", fmt.Errorf("traces endpoint %q has no host", raw)
	case protocol == ProtocolGRPC && u.Path != "" && u.Path != "/":
		return "", fmt.Errorf("traces endpoint %q: a gRPC endpoint has no path", raw)
	}
	if protocol != ProtocolGRPC && (u.Path == "" || u.Path == "/") {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// checkTraces reports a bad endpoint or protocol.
func (c *Config) checkTraces() error {
	switch c.OTLPTracesProtocol {
	case "", ProtocolHTTPProtobuf, ProtocolGRPC:
	default:
		return fmt.Errorf("unsupported OTLP protocol %q; expected %s or %s", c.OTLPTracesProtocol, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
	if c.OTLPTracesEndpoint == "" {
		return nil
	}
	_, err := tracesEndpoint(c.OTLPTracesEndpoint, c.OTLPTracesProtocol)
	return err
}

// newExporter is the OTLP exporter of cfg's endpoint and protocol.
func newExporter(cfg *Config) (sdktrace.SpanExporter, error) {
	endpoint, err := tracesEndpoint(cfg.OTLPTracesEndpoint, cfg.OTLPTracesProtocol)
	if err != nil {
		return nil, err
	}
	// New only builds the client: neither protocol connects before the
	// first export, so an endpoint that is down costs nothing here.
	if cfg.OTLPTracesProtocol == ProtocolGRPC {
		return otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpointURL(endpoint), otlptracegrpc.WithTimeout(traceExportTimeout))
	}
	return otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint), otlptracehttp.WithTimeout(traceExportTimeout))
}

// spanner ends one span per request into a batch span processor, as vLLM's
// tracer does. Safe for concurrent use.
type spanner struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	exp    *countingExporter
	ended  atomic.Int64
	closed atomic.Bool
}

// newSpanner exports through exp. The spanner's methods take a nil
// receiver, the server's without an endpoint, and do nothing.
func newSpanner(exp sdktrace.SpanExporter) *spanner {
	ce := &countingExporter{SpanExporter: exp}
	res := resource.NewSchemaless(attribute.String("service.name", TraceServiceName))
	// The default sampler, parent-based and always on, is vLLM's: a
	// caller's unsampled trace gets no span.
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(ce))
	return &spanner{tp: tp, tracer: tp.Tracer("github.com/llmload/llmload/engine/sim"), exp: ce}
}

// spanFacts is what a request's span says.
type spanFacts struct {
	id      string
	model   string
	status  int // the HTTP status written, 0 for none
	c       *completion
	arrived time.Time
	end     time.Time
}

// record ends the span of a request whose handler is done. The caller's
// traceparent, when valid, makes it a child of the caller's span; a
// missing or malformed one a new root.
func (sp *spanner) record(h http.Header, f *spanFacts) {
	if sp == nil || sp.closed.Load() {
		return
	}
	parent := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(h))
	_, span := sp.tracer.Start(parent, SpanName, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(f.arrived), trace.WithAttributes(f.attributes()...))
	if !span.IsRecording() {
		return
	}
	if msg := f.failure(); msg != "" {
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(f.end))
	sp.ended.Add(1)
}

// attributes are vLLM's: e2e from the arrival to the end; time in queue
// from asking for a batch slot to holding one (vLLM's QUEUED to
// SCHEDULED); prefill from then to the first token; decode from the first
// token to the last; inference from the slot to the last token; TTFT from
// the arrival to the first token's leaving for the client. A figure the
// request never reached (a rejected request has no queue) is left out
// rather than sent as vLLM's zero.
func (f *spanFacts) attributes() []attribute.KeyValue {
	kv := []attribute.KeyValue{
		attribute.String(AttrRequestID, f.id),
		attribute.String(AttrResponseModel, f.model),
		attribute.Float64(AttrE2E, f.end.Sub(f.arrived).Seconds()),
	}
	c := f.c
	if c == nil {
		return kv
	}
	kv = append(kv, attribute.Int(AttrPromptTokens, c.promptTokens), attribute.Int(AttrCompletionTokens, c.sentTokens))
	if c.maxTokens > 0 {
		kv = append(kv, attribute.Int(AttrMaxTokens, c.maxTokens))
	}
	since := func(key string, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() {
			kv = append(kv, attribute.Float64(key, to.Sub(from).Seconds()))
		}
	}
	since(AttrQueue, c.queued, c.scheduled)
	since(AttrPrefill, c.scheduled, c.firstToken)
	since(AttrDecode, c.firstToken, c.lastToken)
	since(AttrInference, c.scheduled, c.lastToken)
	since(AttrTTFT, f.arrived, c.firstSent)
	if f.failure() == "" {
		reasons, _ := json.Marshal([]string{c.engineFinish()})
		kv = append(kv, attribute.String(AttrFinishReasons, string(reasons)))
	}
	return kv
}

// failure says why the request failed, "" when it was answered whole.
func (f *spanFacts) failure() string {
	switch {
	case f.status == 0:
		return "no response: the connection was closed"
	case f.status >= 400:
		return fmt.Sprintf("HTTP %d %s", f.status, http.StatusText(f.status))
	case f.c == nil || !f.c.complete:
		return "the answer was cut before its end"
	}
	return ""
}

// shutdown flushes the queued spans within wait and stops exporting.
func (sp *spanner) shutdown(wait time.Duration) error {
	if sp == nil {
		return nil
	}
	sp.closed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := sp.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// flush exports the queued spans now, within ctx.
func (sp *spanner) flush(ctx context.Context) error {
	if sp == nil {
		return nil
	}
	return sp.tp.ForceFlush(ctx)
}

// stats counts the spans; Dropped once shut down.
func (sp *spanner) stats() SpanStats {
	if sp == nil {
		return SpanStats{}
	}
	st := SpanStats{Ended: sp.ended.Load(), Exported: sp.exp.exported.Load(), Failed: sp.exp.failed.Load(), LastError: sp.exp.lastError()}
	if sp.closed.Load() {
		st.Dropped = max(0, st.Ended-st.Exported-st.Failed)
	}
	return st
}

// countingExporter counts what its exporter delivered and what it could
// not. It swallows the error once counted, so that an endpoint that is
// down does not print a line per batch during a load test: Close reports
// the count and the last error instead.
type countingExporter struct {
	sdktrace.SpanExporter
	exported, failed atomic.Int64

	mu      sync.Mutex
	lastErr error
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.failed.Add(int64(len(spans)))
		e.mu.Lock()
		e.lastErr = err
		e.mu.Unlock()
		return nil
	}
	e.exported.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) lastError() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lastErr == nil {
		return ""
	}
	return e.lastErr.Error()
}
