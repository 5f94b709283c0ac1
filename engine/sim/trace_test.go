package sim

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// receiver keeps the spans an OTLP endpoint got, with their resource's
// service.name. Safe for concurrent use.
type receiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (rc *receiver) add(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"].GetStringValue()
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				rc.spans, rc.services = append(rc.spans, sp), append(rc.services, service)
			}
		}
	}
}

// byID is the spans by gen_ai.request.id.
func (rc *receiver) byID(t *testing.T) map[string]*tracepb.Span {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for i, sp := range rc.spans {
		id := attrs(sp.GetAttributes())[AttrRequestID].GetStringValue()
		if _, dup := out[id]; dup {
			t.Errorf("two spans for request %q", id)
		}
		if got := rc.services[i]; got != TraceServiceName {
			t.Errorf("span %q: service.name %q, want %q", id, got, TraceServiceName)
		}
		out[id] = sp
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// httpReceiver is an OTLP/HTTP protobuf endpoint on loopback; it returns
// the endpoint's URL.
func httpReceiver(t *testing.T, rc *receiver) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("OTLP request %s %s (%s): %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rc.add(&req)
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL // no path: the simulator posts to /v1/traces
}

// grpcTraces is an OTLP gRPC trace service.
type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	rc *receiver
}

func (g grpcTraces) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.rc.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// grpcReceiver is an OTLP gRPC endpoint on loopback; it returns host:port.
func grpcReceiver(t *testing.T, rc *receiver) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcTraces{rc: rc})
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

// traced is one request sent and what came back.
type traced struct {
	name, path, body, traceparent string
	header                        map[string]string
	status                        int
	requestID, bodyID             string
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// sendTraced sends each request to base and fills in its answer.
func sendTraced(t *testing.T, base string, reqs []traced) {
	t.Helper()
	for i := range reqs {
		q := &reqs[i]
		r, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(base, "/v1")+q.path, strings.NewReader(q.body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		if q.traceparent != "" {
			r.Header.Set("Traceparent", q.traceparent)
		}
		for k, v := range q.header {
			r.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		q.status, q.requestID = resp.StatusCode, resp.Header.Get(RequestIDHeader)
		q.bodyID = answerID(body)
	}
}

// answerID is the "id" of a whole answer, or of a stream's first event
// that has one (the Messages API's sits in message_start's message).
func answerID(body []byte) string {
	var whole struct {
		ID      string `json:"id"`
		Message struct {
			ID string `json:"id"`
		} `json:"message"`
		Response struct {
			ID string `json:"id"`
		} `json:"response"`
	}
	if json.Unmarshal(body, &whole) == nil && whole.ID != "" {
		return whole.ID
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if ok && json.Unmarshal([]byte(data), &whole) == nil {
			for _, id := range []string{whole.ID, whole.Message.ID, whole.Response.ID} {
				if id != "" {
					return id
				}
			}
		}
	}
	return ""
}

// tracedRequests covers every generating API, streamed and not, an error,
// and the three kinds of traceparent.
func tracedRequests(t *testing.T) []traced {
	valid := "00-" + callerTrace + "-" + callerSpan + "-01"
	anth := map[string]string{"X-Api-Key": "k", "Anthropic-Version": "2023-06-01"}
	msgs := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]`
	return []traced{
		{name: "chat stream, caller's trace", path: "/v1/chat/completions", traceparent: valid,
			body: chatBody(t, "hello", map[string]any{"max_tokens": 6, "stream": true})},
		{name: "chat whole, malformed traceparent", path: "/v1/chat/completions", traceparent: "00-" + callerTrace + "-zz-01",
			body: chatBody(t, "hello", map[string]any{"max_tokens": 6})},
		{name: "completions, no traceparent", path: "/v1/completions", body: `{"prompt":"once upon","max_tokens":4,"stream":true}`},
		{name: "responses", path: "/v1/responses", traceparent: valid, body: `{"input":"hi","max_output_tokens":5}`},
		{name: "messages stream", path: "/v1/messages", header: anth, body: msgs + `,"stream":true}`},
		{name: "embeddings", path: "/v1/embeddings", body: `{"input":"embed me"}`},
		{name: "bad role", path: "/v1/chat/completions", traceparent: valid,
			body: `{"messages":[{"role":"wizard","content":"hi"}]}`},
	}
}

// One span per request, to either protocol: named llm_request, a server
// span of the caller's trace (or a new root), its id the answer's and the
// x-request-id header's, vLLM's attributes, flushed by Close.
func TestSpansExported(t *testing.T) {
	for _, protocol := range []string{ProtocolHTTPProtobuf, ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			rc := &receiver{}
			endpoint := httpReceiver(t, rc)
			if protocol == ProtocolGRPC {
				endpoint = grpcReceiver(t, rc)
			}
			var truth strings.Builder
			s := New(zeroCost(Config{Model: "m", OTLPTracesEndpoint: endpoint, OTLPTracesProtocol: protocol, TruthLog: &truth}))
			base, err := s.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			reqs := tracedRequests(t)
			sendTraced(t, base, reqs)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			spans := rc.byID(t)
			if got, want := len(spans), len(reqs); got != want {
				t.Fatalf("%d spans, want %d, one per request", got, want)
			}
			for _, q := range reqs {
				checkSpan(t, q, spans[q.requestID])
			}
			checkTruthTTFT(t, truth.String(), spans)
			st := s.Stats().Spans
			if st.Ended != int64(len(reqs)) || st.Exported != st.Ended || st.Failed != 0 || st.Dropped != 0 {
				t.Errorf("span stats %+v, want %d ended and exported", st, len(reqs))
			}
		})
	}
}

// checkTruthTTFT holds each streamed answer's span TTFT against the truth
// log's, and queue + prefill within it: the rest is the time before the
// request asked for a slot.
func checkTruthTTFT(t *testing.T, truth string, spans map[string]*tracepb.Span) {
	t.Helper()
	streamed := 0
	for line := range strings.SplitSeq(strings.TrimSpace(truth), "\n") {
		var rec TruthRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		sp := spans[rec.ID]
		if sp == nil || rec.TTFTMS == 0 {
			continue
		}
		streamed++
		a := attrs(sp.GetAttributes())
		ttft := a[AttrTTFT].GetDoubleValue()
		if !near(ttft, rec.TTFTMS/1000, 1e-3) {
			t.Errorf("%s: span TTFT %v s, truth log %v ms", rec.ID, ttft, rec.TTFTMS)
		}
		if gap := ttft - a[AttrQueue].GetDoubleValue() - a[AttrPrefill].GetDoubleValue(); gap < -1e-9 || gap > 0.1 {
			t.Errorf("%s: TTFT %v s − queue − prefill = %v s, want the small time before asking for a slot", rec.ID, ttft, gap)
		}
	}
	if streamed < 3 {
		t.Errorf("%d streamed answers in the truth log, want 3", streamed)
	}
}

func checkSpan(t *testing.T, q traced, sp *tracepb.Span) {
	t.Helper()
	if sp == nil {
		t.Errorf("%s: no span for x-request-id %q", q.name, q.requestID)
		return
	}
	if q.status == http.StatusOK && q.path != "/v1/embeddings" && q.bodyID != q.requestID { // an embeddings answer has no id
		t.Errorf("%s: answer id %q, x-request-id %q: want equal", q.name, q.bodyID, q.requestID)
	}
	if sp.GetName() != SpanName || sp.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("%s: span %q kind %v, want %q SERVER", q.name, sp.GetName(), sp.GetKind(), SpanName)
	}
	trace, parent := hex.EncodeToString(sp.GetTraceId()), hex.EncodeToString(sp.GetParentSpanId())
	switch {
	case strings.HasPrefix(q.traceparent, "00-"+callerTrace+"-"+callerSpan):
		if trace != callerTrace || parent != callerSpan {
			t.Errorf("%s: trace %s parent %s, want the caller's %s %s", q.name, trace, parent, callerTrace, callerSpan)
		}
	case trace == callerTrace || parent != "" || len(sp.GetTraceId()) != 16:
		t.Errorf("%s: trace %s parent %q, want a new root trace", q.name, trace, parent)
	}
	a := attrs(sp.GetAttributes())
	if sp.GetStartTimeUnixNano() == 0 || sp.GetEndTimeUnixNano() < sp.GetStartTimeUnixNano() {
		t.Errorf("%s: span from %d to %d", q.name, sp.GetStartTimeUnixNano(), sp.GetEndTimeUnixNano())
	}
	e2e := float64(sp.GetEndTimeUnixNano()-sp.GetStartTimeUnixNano()) / 1e9
	if got := a[AttrE2E].GetDoubleValue(); got < e2e-1e-6 || got > e2e+1e-6 {
		t.Errorf("%s: e2e %v s, want the span's length %v s", q.name, got, e2e)
	}
	if q.status != http.StatusOK {
		if sp.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("%s: HTTP %d, span status %v, want ERROR", q.name, q.status, sp.GetStatus())
		}
		return
	}
	if sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("%s: span status %v for an answer", q.name, sp.GetStatus())
	}
	for _, key := range []string{AttrQueue, AttrPrefill, AttrDecode, AttrInference, AttrTTFT} {
		if v, ok := a[key].GetValue().(*commonpb.AnyValue_DoubleValue); !ok || v.DoubleValue < 0 {
			t.Errorf("%s: %s = %v, want float seconds", q.name, key, a[key])
		}
	}
	if a[AttrPromptTokens].GetIntValue() <= 0 || a[AttrResponseModel].GetStringValue() != "m" {
		t.Errorf("%s: prompt tokens %v, model %v", q.name, a[AttrPromptTokens], a[AttrResponseModel])
	}
	if q.path != "/v1/embeddings" && (a[AttrCompletionTokens].GetIntValue() <= 0 || a[AttrMaxTokens].GetIntValue() <= 0) {
		t.Errorf("%s: completion tokens %v, max tokens %v", q.name, a[AttrCompletionTokens], a[AttrMaxTokens])
	}
}

// The spans of a model under load, timed in a bubble: queue + prefill is
// the server's TTFT (no time passes between the arrival and the request's
// asking for a slot), which is the truth log's, and the queue grows once
// the batch is full.
func TestSpanTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var truth strings.Builder
		cfg := Config{MaxBatch: 2, PrefillBase: 10 * time.Millisecond, PrefillPerToken: -1, DecodeBase: 5 * time.Millisecond,
			DecodePerSeq: -1, PrefillInterference: -1, TruthLog: &truth}
		exp := keptSpans{tracetest.NewInMemoryExporter()}
		s := newServer(cfg)
		s.spans = newSpanner(exp)
		const n, tokens = 6, 8
		body := chatBody(t, "hello", map[string]any{"max_tokens": tokens, "stream": true, "ignore_eos": true})
		streamsInProcess(s, body, n)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		truthTTFT := map[string]float64{}
		for line := range strings.SplitSeq(strings.TrimSpace(truth.String()), "\n") {
			var rec TruthRecord
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			truthTTFT[rec.ID] = rec.TTFTMS / 1000
		}
		spans := exp.GetSpans()
		if len(spans) != n {
			t.Fatalf("%d spans, want %d", len(spans), n)
		}
		queued := 0
		for _, sp := range spans {
			a := map[string]float64{}
			var id string
			for _, kv := range sp.Attributes {
				a[string(kv.Key)] = kv.Value.AsFloat64()
				if kv.Key == AttrRequestID {
					id = kv.Value.AsString()
				}
			}
			if got, want := a[AttrQueue]+a[AttrPrefill], a[AttrTTFT]; !near(got, want, 1e-9) {
				t.Errorf("%s: queue %v + prefill %v = %v, want TTFT %v", id, a[AttrQueue], a[AttrPrefill], got, want)
			}
			if got, want := a[AttrTTFT], truthTTFT[id]; !near(got, want, 1e-3) {
				t.Errorf("%s: TTFT %v s, truth log %v s", id, got, want)
			}
			if got, want := a[AttrDecode], float64(tokens-1)*0.005; !near(got, want, 1e-9) {
				t.Errorf("%s: decode %v s, want %v: %d steps of 5 ms", id, got, want, tokens-1)
			}
			if got, want := a[AttrInference], a[AttrPrefill]+a[AttrDecode]; !near(got, want, 1e-9) {
				t.Errorf("%s: inference %v s, want prefill + decode %v", id, got, want)
			}
			if a[AttrPrefill] < 0.010-1e-9 {
				t.Errorf("%s: prefill %v s, below its 10 ms cost", id, a[AttrPrefill])
			}
			if a[AttrQueue] > 0 {
				queued++
			}
		}
		if got, want := queued, n-cfg.MaxBatch; got != want {
			t.Errorf("%d requests queued, want %d: those beyond the batch's %d slots", got, want, cfg.MaxBatch)
		}
		if cum, _ := s.metrics.queue.snapshot(); cum[len(cum)-1] != n {
			got := cum[len(cum)-1]
			t.Errorf("queue histogram counted %d, want %d", got, n)
		}
	})
}

// keptSpans keeps its spans past Shutdown, which would clear them.
type keptSpans struct{ *tracetest.InMemoryExporter }

func (keptSpans) Shutdown(context.Context) error { return nil }

func near(a, b, eps float64) bool { return a-b <= eps && b-a <= eps }

// An endpoint that refuses connections slows no answer; Close gives up on
// the spans within its bound and counts them lost.
func TestSpansEndpointDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	for _, protocol := range []string{ProtocolHTTPProtobuf, ProtocolGRPC} {
		t.Run(protocol, func(t *testing.T) {
			s := New(zeroCost(Config{OTLPTracesEndpoint: down, OTLPTracesProtocol: protocol}))
			s.flushWait = 200 * time.Millisecond
			base := startServer(t, s)
			const n = 20
			start := time.Now()
			for i := range n {
				resp, body, err := post(t, base, chatBody(t, "hi", map[string]any{"max_tokens": 3 + i}), 5*time.Second)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %v %s", i, err, body)
				}
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%d answers took %v with the endpoint down", n, took)
			}
			closed := time.Now()
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if took := time.Since(closed); took > 3*time.Second {
				t.Errorf("Close took %v, want its flush bounded by %v", took, s.flushWait)
			}
			st := s.Stats().Spans
			if st.Ended != n || st.Exported != 0 || st.Failed+st.Dropped != n {
				t.Errorf("span stats %+v, want %d ended, none exported, all failed or dropped", st, n)
			}
		})
	}
}

func TestTracesEndpoint(t *testing.T) {
	tests := []struct {
		raw, protocol, want string
	}{
		{"127.0.0.1:4318", ProtocolHTTPProtobuf, "http://127.0.0.1:4318/v1/traces"},
		{"http://collector:4318", ProtocolHTTPProtobuf, "http://collector:4318/v1/traces"},
		{"https://collector/otlp/v1/traces", ProtocolHTTPProtobuf, "https://collector/otlp/v1/traces"},
		{"127.0.0.1:4317", ProtocolGRPC, "http://127.0.0.1:4317"},
		{"https://collector:4317", ProtocolGRPC, "https://collector:4317"},
	}
	for _, tt := range tests {
		got, err := tracesEndpoint(tt.raw, tt.protocol)
		if err != nil || got != tt.want {
			t.Errorf("tracesEndpoint(%q, %s) = %q, %v; want %q", tt.raw, tt.protocol, got, err, tt.want)
		}
	}
}

// Every answer's id is unique, sent as x-request-id, and logged.
func TestRequestIDs(t *testing.T) {
	var truth strings.Builder
	s := New(zeroCost(Config{TruthLog: &truth}))
	seen := map[string]bool{}
	for i := range 5 {
		body := chatBody(t, "same prompt", map[string]any{"max_tokens": 4})
		if i == 4 {
			body = `{"messages":[]}`
		}
		w := serve(s, http.MethodPost, "/v1/chat/completions", body, nil)
		id := w.Header().Get(RequestIDHeader)
		if id == "" || seen[id] {
			t.Errorf("request %d: x-request-id %q, want a new one", i, id)
		}
		seen[id] = true
		if got := answerID(w.Body.Bytes()); i < 4 && got != id {
			t.Errorf("request %d: answer id %q, x-request-id %q", i, got, id)
		}
	}
	_ = s.Close()
	for line := range strings.SplitSeq(strings.TrimSpace(truth.String()), "\n") {
		var rec TruthRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil || !seen[rec.ID] {
			t.Errorf("truth record %s: id not an x-request-id sent (%v)", line, err)
		}
	}
}

// A caller's unsampled trace gets no span, as vLLM's parent-based
// sampler decides; a sampled one does.
func TestSpanSampling(t *testing.T) {
	exp := keptSpans{tracetest.NewInMemoryExporter()}
	s := newServer(zeroCost(Config{}))
	s.spans = newSpanner(exp)
	body := chatBody(t, "hi", map[string]any{"max_tokens": 2})
	for _, flags := range []string{"00", "01"} {
		serve(s, http.MethodPost, "/v1/chat/completions", body, map[string]string{"Traceparent": "00-" + callerTrace + "-" + callerSpan + "-" + flags})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || !spans[0].SpanContext.IsSampled() || spans[0].Parent.SpanID().String() != callerSpan {
		t.Errorf("spans %+v, want one, the sampled caller's child", spans)
	}
	if got := s.Stats().Spans; got.Ended != 1 || got.Exported != 1 {
		t.Errorf("span stats %+v, want 1 ended and exported", got)
	}
}

// BenchmarkServeTraced is one whole zero-cost chat answer served
// in-process, with and without its span.
func BenchmarkServeTraced(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("traced=%v", traced), func(b *testing.B) {
			s := newServer(zeroCost(Config{}))
			if traced {
				s.spans = newSpanner(discardSpans{})
			}
			body := `{"messages":[{"role":"user","content":"hello"}],"max_tokens":4}`
			header := map[string]string{"Traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}
			b.ReportAllocs()
			for b.Loop() {
				serve(s, http.MethodPost, "/v1/chat/completions", body, header)
			}
			b.StopTimer()
			_ = s.Close()
		})
	}
}

// discardSpans exports nowhere.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }
