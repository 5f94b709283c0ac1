package traces

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// spanSink records the spans a Receiver delivers.
type spanSink struct {
	mu    sync.Mutex
	spans []Span
}

func (s *spanSink) deliver(sp Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, sp)
}

func (s *spanSink) got() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

func listen(t *testing.T, opt Options) (*Receiver, *spanSink) {
	t.Helper()
	var sink spanSink
	if opt.Deliver == nil {
		opt.Deliver = sink.deliver
	}
	r, err := Listen("127.0.0.1:0", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, &sink
}

func exportProto(t *testing.T, spans ...*tracepb.Span) []byte {
	t.Helper()
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: spans}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustUnmarshal(t *testing.T, body []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

func post(t *testing.T, r *Receiver, ct, encoding string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+r.Addr().String()+TracesPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var requestSpan = &tracepb.Span{TraceId: traceA, SpanId: spanA, Name: "llm_request", Attributes: []*commonpb.KeyValue{kv(attrE2E, dbl(1))}}

func TestReceiverHTTP(t *testing.T) {
	protoBody := exportProto(t, requestSpan)
	jsonBody := []byte(jsonExportOf(`{"traceId":"` + traceAHex + `","spanId":"` + spanAHex + `","attributes":[{"key":"gen_ai.latency.e2e","value":{"doubleValue":1}}]}`))
	tests := map[string]struct {
		ct, encoding string
		body         []byte
		code         int
		delivered    int
	}{
		"protobuf":           {ct: ctProtobuf, body: protoBody, code: 200, delivered: 1},
		"protobuf gzip":      {ct: ctProtobuf, encoding: "gzip", body: gzipped(t, protoBody), code: 200, delivered: 1},
		"json":               {ct: ctJSON, body: jsonBody, code: 200, delivered: 1},
		"json charset gzip":  {ct: ctJSON + "; charset=utf-8", encoding: "gzip", body: gzipped(t, jsonBody), code: 200, delivered: 1},
		"unknown type":       {ct: "text/plain", body: protoBody, code: 415},
		"unknown encoding":   {ct: ctProtobuf, encoding: "br", body: protoBody, code: 415},
		"undecodable proto":  {ct: ctProtobuf, body: []byte{0xff, 0xff, 0xff}, code: 400},
		"undecodable json":   {ct: ctJSON, body: []byte(`{"resourceSpans":`), code: 400},
		"bad gzip":           {ct: ctProtobuf, encoding: "gzip", body: protoBody, code: 400},
		"over the cap":       {ct: ctProtobuf, body: make([]byte, 2048), code: 413},
		"over the cap unzip": {ct: ctProtobuf, encoding: "gzip", body: gzipped(t, make([]byte, 4096)), code: 413},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, sink := listen(t, Options{MaxBodyBytes: 1024})
			resp, out := post(t, r, tt.ct, tt.encoding, tt.body)
			if resp.StatusCode != tt.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tt.code, out)
			}
			if got := len(sink.got()); got != tt.delivered {
				t.Errorf("delivered %d spans, want %d", got, tt.delivered)
			}
			if tt.code != 200 {
				var st status.Status
				if err := proto.Unmarshal(out, &st); err != nil && !strings.HasPrefix(tt.ct, ctJSON) {
					t.Errorf("error body is not a google.rpc.Status: %v", err)
				}
				if got := r.Stats().BadRequests; got != 1 {
					t.Errorf("bad requests = %d, want 1", got)
				}
			}
		})
	}
}

func TestReceiverPartialSuccess(t *testing.T) {
	bad := &tracepb.Span{TraceId: traceA[:3], SpanId: spanA, Attributes: requestSpan.Attributes}
	other := &tracepb.Span{TraceId: traceA, SpanId: spanA, Name: "http"}
	r, sink := listen(t, Options{})
	_, out := post(t, r, ctProtobuf, "", exportProto(t, requestSpan, bad, bad, other))
	var resp coltracepb.ExportTraceServiceResponse
	if err := proto.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.GetPartialSuccess().GetRejectedSpans(); got != 2 || resp.GetPartialSuccess().GetErrorMessage() == "" {
		t.Errorf("partial success = %v, want 2 rejected with a message", resp.GetPartialSuccess())
	}
	if got := len(sink.got()); got != 1 {
		t.Errorf("delivered %d, want 1", got)
	}
	want := ReceiverStats{Exports: 1, Spans: 4, Delivered: 1, Other: 1, Rejected: 2}
	if got := r.Stats(); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}

	// JSON gets its answer in JSON, rejected_spans as OTLP/JSON's int64 string.
	_, out = post(t, r, ctJSON, "", []byte(jsonExportOf(`{"traceId":"zz","spanId":"`+spanAHex+`","attributes":[{"key":"gen_ai.latency.e2e","value":{"doubleValue":1}}]}`)))
	resp.Reset()
	if err := protojson.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := resp.GetPartialSuccess().GetRejectedSpans(); got != 1 {
		t.Errorf("JSON answer %s: rejected %d, want 1", out, got)
	}
}

func TestReceiverRoutes(t *testing.T) {
	r, _ := listen(t, Options{})
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, TracesPath, 405},
		{http.MethodPost, "/v1/metrics", 404},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+r.Addr().String()+tt.path, strings.NewReader(""))
		req.Header.Set("Content-Type", ctProtobuf)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.code)
		}
	}
}

func TestListenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, err = Listen(addr, Options{Deliver: func(Span) {}})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Listen on a port in use: %v; want an error naming %s", err, addr)
	}
	if _, err := Listen("127.0.0.1:0", Options{}); err == nil {
		t.Error("Listen without Deliver: nil error")
	}
}

func TestReceiverClose(t *testing.T) {
	r, _ := listen(t, Options{})
	addr := r.Addr().String()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("still accepting after Close")
	}
}

func TestReceiverCloseWaitsForHandlers(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	r, err := Listen("127.0.0.1:0", Options{Deliver: func(Span) {
		close(entered)
		<-release
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := exportProto(t, requestSpan)
	go func() {
		resp, err := http.Post("http://"+r.Addr().String()+TracesPath, ctProtobuf, bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	closed := make(chan struct{})
	go func() {
		_ = r.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while a handler was delivering")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the handler ended")
	}
}
