package traces

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// DefaultMaxBodyBytes caps one export request, after decompression: the
// OTel SDKs' batches of 512 spans are well under 1 MiB.
const DefaultMaxBodyBytes = 16 << 20

// TracesPath is where OTLP/HTTP exporters post spans.
const TracesPath = "/v1/traces"

const (
	ctProtobuf = "application/x-protobuf"
	ctJSON     = "application/json"
)

// shutdownGrace is how long Close lets in-flight exports finish before it
// closes their connections.
const shutdownGrace = 2 * time.Second

// Options configures a Receiver.
type Options struct {
	// Deliver receives every request span, from the receiver's handler
	// goroutines concurrently (Joiner.Span is such a function). Required.
	Deliver func(Span)
	// MaxBodyBytes caps one export request; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// ReceiverStats counts what a Receiver took in. Spans = Delivered + Other
// + Rejected; Malformed counts delivered spans with a bad attribute value.
type ReceiverStats struct {
	Exports     int64 `json:"exports"`      // export requests answered 200
	BadRequests int64 `json:"bad_requests"` // answered 4xx, or InvalidArgument over gRPC
	Spans       int64 `json:"spans"`        // spans in the exports decoded
	Delivered   int64 `json:"delivered"`    // request spans passed to Deliver
	Other       int64 `json:"other"`        // spans carrying no request attribute
	Rejected    int64 `json:"rejected"`     // spans with a bad trace or span id
	Malformed   int64 `json:"malformed"`    // delivered spans with a bad attribute value
}

// Receiver is an OTLP trace receiver: OTLP/HTTP (protobuf and JSON) and
// OTLP/gRPC on one port. It is safe for concurrent use.
type Receiver struct {
	opt      Options
	ln       net.Listener
	srv      *http.Server
	grpc     *grpc.Server
	served   chan struct{}
	close    sync.Once
	mu       sync.Mutex // guards closed, so no handler starts after Wait
	closed   bool
	handlers sync.WaitGroup

	exports, badRequests, spans, delivered, other, rejected, malformed atomic.Int64
}

// Listen starts a receiver on addr (host:port; port 0 picks a free one).
func Listen(addr string, opt Options) (*Receiver, error) {
	if opt.Deliver == nil {
		return nil, errors.New("traces: Options.Deliver is nil")
	}
	ln, err := ListenTCP(addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, opt)
}

// ListenTCP opens the receiver's socket on addr, for Serve: a caller that
// must tell an exporter the address before it can serve (a simulator
// started before the load) listens first. Exports that come before Serve
// wait in the socket's backlog.
func ListenTCP(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("traces: cannot listen for OTLP on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve starts a receiver on ln, which it closes on Close (or now, when
// opt is unusable).
func Serve(ln net.Listener, opt Options) (*Receiver, error) {
	if opt.Deliver == nil {
		ln.Close()
		return nil, errors.New("traces: Options.Deliver is nil")
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = DefaultMaxBodyBytes
	}
	r := &Receiver{opt: opt, ln: ln, served: make(chan struct{})}
	r.grpc = newGRPCServer(r, opt.MaxBodyBytes)
	// gRPC is HTTP/2 with prior knowledge and no TLS: the standard server
	// speaks it beside HTTP/1.1, and grpc-go serves it as a handler, so one
	// port takes both protocols without a sniffing listener.
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.served)
		_ = r.srv.Serve(ln) // ends with ErrServerClosed on Close
	}()
	return r, nil
}

// Addr is the address the receiver listens on.
func (r *Receiver) Addr() net.Addr { return r.ln.Addr() }

// Close stops the receiver; it returns when no handler runs any more, so
// Deliver is never called after it.
func (r *Receiver) Close() error {
	r.close.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if r.srv.Shutdown(ctx) != nil {
			_ = r.srv.Close()
		}
		<-r.served
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.handlers.Wait()
		r.grpc.Stop()
	})
	return nil
}

// Stats is the receiver's account so far.
func (r *Receiver) Stats() ReceiverStats {
	return ReceiverStats{
		Exports: r.exports.Load(), BadRequests: r.badRequests.Load(), Spans: r.spans.Load(),
		Delivered: r.delivered.Load(), Other: r.other.Load(), Rejected: r.rejected.Load(),
		Malformed: r.malformed.Load(),
	}
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		http.Error(w, "receiver closed", http.StatusServiceUnavailable)
		return
	}
	r.handlers.Add(1)
	r.mu.Unlock()
	defer r.handlers.Done()
	if req.ProtoMajor == 2 && strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc") {
		r.grpc.ServeHTTP(w, req)
		return
	}
	if req.URL.Path != TracesPath {
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.fail(w, ctProtobuf, http.StatusMethodNotAllowed, "OTLP export must be POST")
		return
	}
	r.export(w, req)
}

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if ct != ctProtobuf && ct != ctJSON {
		r.fail(w, ctProtobuf, http.StatusUnsupportedMediaType,
			fmt.Sprintf("content type %q: OTLP/HTTP takes %s or %s", ct, ctProtobuf, ctJSON))
		return
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer putBody(buf)
	body, code, err := r.readBody(w, req, buf)
	if err != nil {
		r.fail(w, ct, code, err.Error())
		return
	}
	var b batch
	if ct == ctJSON {
		var msg *coltracepb.ExportTraceServiceRequest
		if msg, err = unmarshalJSON(body); err == nil {
			decodeExport(msg, &b)
		}
	} else {
		err = decodeWire(body, &b)
	}
	if err != nil {
		r.fail(w, ct, http.StatusBadRequest, "undecodable export request: "+err.Error())
		return
	}
	resp := r.take(&b)
	var out []byte
	if ct == ctJSON {
		out, _ = protojson.Marshal(resp)
	} else {
		out, _ = proto.Marshal(resp)
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(out)
}

// bodies recycles the request bodies' buffers: the decoders copy what
// they keep, so a buffer is free again once its request is answered.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooled keeps a rare huge body's buffer from staying in the pool.
const maxPooled = 4 << 20

func putBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		b.Reset()
		bodies.Put(b)
	}
}

// readBody reads the (decompressed) body up to the cap into buf.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request, buf *bytes.Buffer) ([]byte, int, error) {
	var src io.Reader = http.MaxBytesReader(w, req.Body, r.opt.MaxBodyBytes)
	switch enc := strings.ToLower(req.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("content encoding %q: only gzip is accepted", enc)
	}
	if req.ContentLength > 0 && req.ContentLength <= r.opt.MaxBodyBytes {
		buf.Grow(int(req.ContentLength))
	}
	// The cap holds after decompression too, so a small gzip bomb cannot
	// blow the memory up.
	n, err := buf.ReadFrom(io.LimitReader(src, r.opt.MaxBodyBytes+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || n > r.opt.MaxBodyBytes:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("export request over %d bytes", r.opt.MaxBodyBytes)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading body: %w", err)
	}
	return buf.Bytes(), 0, nil
}

// fail answers an error with a google.rpc.Status in the request's
// encoding, as the OTLP/HTTP specification asks.
func (r *Receiver) fail(w http.ResponseWriter, ct string, code int, msg string) {
	r.badRequests.Add(1)
	st := &status.Status{Code: grpcCode(code), Message: msg}
	var out []byte
	if ct == ctJSON {
		out, _ = protojson.Marshal(st)
	} else {
		out, _ = proto.Marshal(st)
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(code)
	_, _ = w.Write(out)
}

// grpcCode is the gRPC status code matching an HTTP error answer.
func grpcCode(httpCode int) int32 {
	switch httpCode {
	case http.StatusRequestEntityTooLarge:
		return 8 // RESOURCE_EXHAUSTED
	case http.StatusUnsupportedMediaType, http.StatusMethodNotAllowed:
		return 12 // UNIMPLEMENTED
	}
	return 3 // INVALID_ARGUMENT
}

// take delivers an export's request spans, counts the rest and builds the
// answer: partial success when some spans were rejected.
func (r *Receiver) take(b *batch) *coltracepb.ExportTraceServiceResponse {
	for _, sp := range b.spans {
		r.opt.Deliver(sp)
	}
	r.exports.Add(1)
	r.spans.Add(int64(b.received))
	r.delivered.Add(int64(len(b.spans)))
	r.other.Add(int64(b.other))
	r.rejected.Add(int64(b.rejected))
	r.malformed.Add(int64(b.malformed))
	resp := &coltracepb.ExportTraceServiceResponse{}
	if b.rejected > 0 {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{
			RejectedSpans: int64(b.rejected),
			ErrorMessage:  fmt.Sprintf("%d spans with an invalid trace or span id", b.rejected),
		}
	}
	return resp
}
