package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/redact"
)

// Body size limits: an error body is read for its message only; a
// non-streamed completion is read whole.
const (
	maxErrorBody      = 64 << 10
	maxCompletionBody = 32 << 20
)

// outcome is what Preflight needs to know beyond the Result.
type outcome struct {
	location   string // a redirect's Location header
	retryAfter string // the Retry-After header
	protoMajor int    // the response's HTTP major version; 0 without one
	// handshook says that a TLS handshake completed on the connection
	// of a request that got no response: the server closed it after.
	handshook bool
}

// Chat sends req to its endpoint (chat or legacy completions), streamed
// unless req.NoStream, and measures it; failures are classified into
// Result.Err. Times are from t0 (Result.Start), when the request's headers
// were handed to its connection (see stamp); the time to get there is
// Result.Connect. TTFB is
// when Do returns, i.e. when the status line and all headers have been read
// and parsed. Every event is stamped when the read that completed it
// returned, before any JSON decoding; tokens are counted after the stream
// ended. TTFB, TTFT, TTFC, ITL and the token counts describe what arrived
// even when the request failed; E2E and TPOT are set only for a successful
// answer. A non-streamed answer has E2E and token counts only. Safe for
// concurrent use.
func (c *Client) Chat(ctx context.Context, req *engine.ChatRequest) *engine.Result {
	res, _ := c.chat(ctx, req)
	return res
}

// chat sends req and keeps its own credential headers (a per-user token)
// out of the failure's message, as the client's redactor does the
// target's; the redactor is built only for a failure that needs it.
func (c *Client) chat(ctx context.Context, req *engine.ChatRequest) (*engine.Result, outcome) {
	res, out := c.exchange(ctx, req)
	if res.Err != nil && req != nil && len(req.Headers) > 0 {
		if secrets := requestSecrets(req.Headers); len(secrets) > 0 {
			res.Err.Message = redact.NewFor(secrets).Redact(res.Err.Message)
		}
	}
	return res, out
}

// exchange sends req and reads its answer into a Result.
func (c *Client) exchange(ctx context.Context, req *engine.ChatRequest) (*engine.Result, outcome) {
	res := &engine.Result{}
	if req == nil {
		res.Err = &engine.Error{Class: engine.ErrInvalidRequest, Message: "nil request"}
		return res, outcome{}
	}
	d := dialectOf(req)
	if d == nil {
		res.Err = &engine.Error{Class: engine.ErrInvalidRequest,
			Message: fmt.Sprintf("unknown endpoint %q (want one of %s)", req.Endpoint, strings.Join(engine.Endpoints(), ", "))}
		return res, outcome{}
	}
	res.API = endpointOf(req)
	encodeStart := time.Now()
	body, err := c.payload(d, req)
	if err != nil {
		res.Err = &engine.Error{Class: engine.ErrInvalidRequest, Message: c.redact(err.Error())}
		return res, outcome{}
	}
	countMedia(req, res)
	res.BodyBytes = body.n
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t0 := stamp{watch: body.n >= engine.LargeBody && !c.h2c}
	if t0.watch {
		t0.done = rctx.Done() // only a watched upload's wait needs the channel
	}
	hreq, err := c.newRequest(httptrace.WithClientTrace(rctx, t0.trace(c.base.Scheme == "https")), d, req, &body)
	if err != nil {
		res.Err = &engine.Error{Class: engine.ErrInvalidRequest, Message: c.redact(innerMessage(err))}
		return res, outcome{}
	}
	res.TraceID = c.setTraceparent(hreq.Header)
	issued := time.Now()
	res.Encode = issued.Sub(encodeStart)
	w := startWatchdog(issued, c.timeoutsFor(req), cancel)
	defer w.stop()
	resp, err := c.send(hreq, &t0)
	res.Start, res.Connect = t0.from(issued)
	res.TLS = t0.handshake()
	if err != nil {
		res.Upload = t0.upload(res.Start)
		res.Err = c.fail(ctx, rctx, err, phaseRequest)
		return res, outcome{handshook: t0.handshook()}
	}
	if resp.ProtoMajor >= 2 {
		t0.shared()
	}
	res.TTFB = t0.now(res.Start).Sub(res.Start)
	defer resp.Body.Close()
	out := c.read(ctx, rctx, res, resp, w, d, req, &t0)
	out.protoMajor = resp.ProtoMajor
	// Read once the answer is in: the transport hands over the response
	// without waiting for its writer to report the body written, and
	// that report can come after the headers on a busy machine.
	res.Upload = t0.upload(res.Start)
	// A server that answered 2xx had the body whole before its first
	// byte: a writer's report that comes later is the scheduler's delay.
	if resp.StatusCode/100 == 2 && res.TTFB > 0 && res.Upload > res.TTFB {
		res.Upload = res.TTFB
	}
	// Nor after its first token, which the kernel's receive time can
	// stamp a hair before the headers' read returned: upload is a part
	// of TTFT (engine.Breakdown).
	if resp.StatusCode/100 == 2 && res.TTFT > 0 && res.Upload > res.TTFT {
		res.Upload = res.TTFT
	}
	c.mediaTokens(res, d, req)
	return res, out
}

// payload builds req's body: the dialect's JSON, its media spliced in as
// shared segments, or a multipart form the dialect builds as segments.
func (c *Client) payload(d dialect, req *engine.ChatRequest) (payload, error) {
	if md, ok := d.(segmentedDialect); ok && req.Raw == nil {
		return md.payload(req)
	}
	body, err := d.body(req, c.continuous)
	if err != nil {
		return payload{}, err
	}
	if req.Raw != nil || !engine.HasMedia(req.Messages) {
		return single(body), nil
	}
	return splice(body, mediaItems(req))
}

// mediaTokens sets the prompt tokens of a request's media: usage's
// prompt count less the offline count of its text and less the overhead
// the preflight's text-only request measured for the API (the chat
// template's tokens, and the tokenizers' difference on a short text),
// when usage and the count are known. Without a preflight the overhead
// stays in.
func (c *Client) mediaTokens(res *engine.Result, d dialect, req *engine.ChatRequest) {
	if res.Err != nil || res.Images+res.Audios+res.Videos == 0 || res.InputTokensSource != engine.TokensFromUsage {
		return
	}
	n, ok := c.promptTokens(d.prompt(req))
	if !ok {
		return
	}
	if o, known := c.overhead.Load(endpointOf(req)); known && req.Audio == nil {
		n += o.(int)
	}
	if n <= res.InputTokens {
		res.MediaTokens = res.InputTokens - n
	}
}

// calibrate keeps what a text-only request res (the preflight's) cost
// in prompt tokens beyond the offline count of its text.
func (c *Client) calibrate(res *engine.Result, d dialect, req *engine.ChatRequest) {
	if res.Err != nil || res.InputTokensSource != engine.TokensFromUsage || req.Audio != nil || engine.HasMedia(req.Messages) {
		return
	}
	if n, ok := c.promptTokens(d.prompt(req)); ok && n <= res.InputTokens {
		c.overhead.Store(endpointOf(req), res.InputTokens-n)
	}
}

// segmentedDialect is a dialect whose body is not JSON (a multipart
// form): it builds the segments itself.
type segmentedDialect interface {
	payload(req *engine.ChatRequest) (payload, error)
}

// timeoutsFor returns the deadlines of req. A non-streamed answer sends
// nothing until it is complete, so only the total deadline bounds its wait.
func (c *Client) timeoutsFor(req *engine.ChatRequest) timeouts {
	t := c.t
	if !streams(req) {
		t.ttft = t.total
	}
	return t
}

// newRequest builds the HTTP request. The empty X-Idempotency-Key is not
// sent; it lets the transport resend a request that met a keep-alive
// connection the server closed while idle (a race of our pool, not a server
// failure), and send resends the one the transport does not (see send). A
// fresh connection is never retried. The fixed headers and the target's
// are values shared by every request; only a request's own content type
// and headers cost an allocation each.
func (c *Client) newRequest(ctx context.Context, d dialect, r *engine.ChatRequest, body *payload) (*http.Request, error) {
	var req *http.Request
	var err error
	if len(body.segs) == 1 {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, d.url(c), bytes.NewReader(body.segs[0]))
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, d.url(c), body.reader())
		if err == nil {
			req.ContentLength = body.n
			req.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
		}
	}
	if err != nil {
		return nil, err
	}
	h := make(http.Header, fixedHeaders+len(c.headers)+len(r.Headers))
	req.Header = h
	if body.ctype != "" {
		h["Content-Type"] = []string{body.ctype}
	} else {
		hdrJSON.set(h)
	}
	if r.ContentType != "" {
		if strings.ContainsAny(r.ContentType, "\r\n\x00") {
			// The transport would reject it only after t0, as a network error.
			return nil, fmt.Errorf("content type %q contains a line break or NUL", r.ContentType)
		}
		h["Content-Type"] = []string{r.ContentType}
	}
	hdrAcceptStream.set(h)
	switch {
	case r.Endpoint == engine.EndpointSpeech:
		hdrAcceptAny.set(h)
	case !streams(r):
		hdrAcceptJSON.set(h)
	}
	hdrIdentity.set(h)
	hdrUserAgent.set(h)
	h["X-Idempotency-Key"] = nil
	c.setHeaders(h, d)
	if err := setRequestHeaders(h, r.Headers); err != nil {
		return nil, err
	}
	return req, nil
}

// setHeaders puts the credentials of dialect d and the target's headers,
// which come after them, on h.
func (c *Client) setHeaders(h http.Header, d dialect) {
	d.auth(c, h)
	for _, f := range c.headers {
		f.set(h)
	}
}

// The headers of every request, shared read-only; fixedHeaders counts
// them with the idempotency key and two credential headers, to size a
// request's header map once.
var (
	hdrJSON         = newField("Content-Type", "application/json")
	hdrAcceptStream = newField("Accept", "text/event-stream")
	hdrAcceptJSON   = newField("Accept", "application/json")
	hdrAcceptAny    = newField("Accept", "*/*")
	hdrIdentity     = newField("Accept-Encoding", "identity")
	hdrUserAgent    = newField("User-Agent", "llmload")
)

const fixedHeaders = 7

// streams reports whether req asks for a stream: embeddings never do.
func streams(req *engine.ChatRequest) bool {
	return !req.NoStream && req.Endpoint != engine.EndpointEmbeddings
}

// read consumes the response according to its status and content type.
// Any 2xx answer in JSON is read as a complete answer, any other as an
// event stream: what the server sent decides, not what was asked for.
func (c *Client) read(parent, ctx context.Context, res *engine.Result, resp *http.Response, w *watchdog,
	d dialect, req *engine.ChatRequest, t0 *stamp) outcome {
	res.Status = resp.StatusCode
	res.RequestID = headerRequestID(resp.Header)
	out := outcome{location: resp.Header.Get("Location"), retryAfter: resp.Header.Get("Retry-After")}
	ctype := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		c.readHTTPError(res, resp)
	case req.Endpoint == engine.EndpointSpeech && ctype != "application/json" && ctype != "text/event-stream":
		c.readAudio(parent, ctx, res, resp.Body, w, req, ctype, t0)
	case ctype == "application/json":
		// A non-streamed answer, or a server that ignored stream=true:
		// generation has finished before the headers; only the body
		// transfer is left.
		w.activity(time.Now())
		c.readCompletion(parent, ctx, res, resp.Body, d, req)
	default:
		c.readStream(parent, ctx, res, resp, ctype, w, d, req, t0)
	}
	return out
}

// fail classifies a transport error, keeping the API key out of it.
func (c *Client) fail(parent, ctx context.Context, err error, p phase) *engine.Error {
	e := classify(parent, ctx, err, p, c.t)
	e.Message = c.redact(e.Message)
	return e
}

func mediaType(ctype string) string {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return ctype
	}
	return mt
}

// readHTTPError records a non-2xx answer with the server's own message.
// What is left of a long body is discarded so the connection can be reused.
func (c *Client) readHTTPError(res *engine.Result, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.CopyN(io.Discard, resp.Body, maxErrorBody)
	msg := c.serverMessage(body)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	res.Err = &engine.Error{Class: engine.HTTPErrorClass(resp.StatusCode), Message: msg}
}

// decoder holds the per-stream buffers, pooled so that a request reuses
// the buffers of an earlier one: one decoded value per dialect.
type decoder struct {
	head  headReader
	er    eventReader
	chunk streamChunk
	cd    chunkDecoder
	rev   responsesEvent
	mev   messagesEvent
	// s is the stream being read, kept here rather than on readStream's
	// stack: the dialects' interface calls would move it to the heap, one
	// allocation per request.
	s stream
}

var decoders = sync.Pool{New: func() any {
	return &decoder{er: eventReader{buf: make([]byte, initialBufSize)}}
}}

func getDecoder(src io.Reader) *decoder {
	d := decoders.Get().(*decoder)
	d.head.r, d.head.n = src, 0
	d.er.reset(&d.head)
	return d
}

// putDecoder returns d to the pool unless an unusual stream grew it.
func putDecoder(d *decoder) {
	if cap(d.er.buf) > 64<<10 || cap(d.er.data) > 64<<10 {
		return
	}
	d.er.reset(nil)
	d.head.r = nil
	d.chunk.reset()
	d.rev, d.mev, d.s = responsesEvent{}, messagesEvent{}, stream{}
	decoders.Put(d)
}

// readStream measures an event stream.
func (c *Client) readStream(parent, ctx context.Context, res *engine.Result, resp *http.Response, ctype string,
	w *watchdog, dl dialect, req *engine.ChatRequest, t0 *stamp) {
	res.Streamed = ctype == "text/event-stream"
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		// Decoders buffer, which would shift every event's timestamp.
		res.Err = &engine.Error{Class: engine.ErrStreamMalformed,
			Message: "stream is compressed (Content-Encoding " + enc + ") although identity was asked for"}
		return
	}
	d := getDecoder(resp.Body)
	defer putDecoder(d)
	d.er.clock = func() time.Time { return t0.now(res.Start) }
	s := &d.s
	*s = stream{res: res, w: w, dialect: dl, chunk: &d.chunk, dec: &d.cd, rev: &d.rev, mev: &d.mev,
		itlHint: itlHint(req.MaxTokens)}
	res.Err = c.consume(parent, ctx, s, &d.er, ctype)
	if e := res.Err; e != nil && s.events == 0 && (e.Class == engine.ErrStreamTruncated || e.Class == engine.ErrStreamMalformed) {
		// Not a stream at all: some servers answer a bad request with a
		// bare JSON error under text/event-stream.
		if msg, ok := bareError(d.head.bytes()); ok {
			res.Err = &engine.Error{Class: engine.ErrAPI, Message: c.redact(msg)}
		}
	}
	if res.Err == nil && s.done {
		w.drain(drainGrace)
		for _, err := d.er.next(); err == nil; _, err = d.er.next() {
		}
	}
	s.finish()
	// A failed stream's text may be a runaway's 64 MB: counting it offline
	// would cost tens of seconds of CPU for a number no statistic uses.
	if res.Err == nil || s.text.Len() < 1<<20 {
		c.countTokens(res, &s.tally, dl.prompt(req))
	}
	s.tpot()
}

// readCompletion measures a complete answer: E2E when the whole body has
// been read, and tokens. TTFT, TTFC, ITL and TPOT stay absent: no token's
// arrival can be observed, and E2E must not pose as any of them.
func (c *Client) readCompletion(parent, ctx context.Context, res *engine.Result, body io.Reader, d dialect, req *engine.ChatRequest) {
	data, err := io.ReadAll(io.LimitReader(body, maxCompletionBody+1))
	if err != nil {
		res.Err = c.fail(parent, ctx, err, phaseBody)
		return
	}
	end := time.Now()
	if id := answerID(data); id != "" {
		res.RequestID = id
	}
	if len(data) > maxCompletionBody {
		res.Err = &engine.Error{Class: engine.ErrStreamMalformed, Message: "completion body larger than 32 MiB"}
		return
	}
	if e := d.complete(c, res, data, req); e != nil {
		e.Message = c.redact(e.Message)
		res.Err = e
		return
	}
	res.E2E = end.Sub(res.Start)
}

// itlHint sizes a request's ITL slice from its max_tokens, up to 256 gaps
// (2 KB): a longer answer grows it as it goes, while a hint of thousands
// would reserve tens of KB per in-flight request that most never fill.
func itlHint(maxTokens int) int {
	if maxTokens > 1 {
		return min(maxTokens-1, 256)
	}
	return 64
}

// consume handles events until the stream ends or fails.
func (c *Client) consume(parent, ctx context.Context, s *stream, er *eventReader, ctype string) *engine.Error {
	for {
		ev, err := er.next()
		if err != nil {
			return c.endOfStream(parent, ctx, s, ev, err, ctype)
		}
		if e := s.handle(ev); e != nil {
			e.Message = c.redact(e.Message)
			return e
		}
		if s.done {
			return nil
		}
	}
}

// endOfStream decides how a stream that stopped before [DONE] ended: EOF
// after a finish_reason is a normal end; EOF before it is a truncation.
func (c *Client) endOfStream(parent, ctx context.Context, s *stream, ev event, err error, ctype string) *engine.Error {
	incomplete := errors.Is(err, errIncompleteEvent)
	switch {
	case incomplete && s.dialect.cutEnd(ev.Data):
		if e := s.handle(ev); e != nil || s.done {
			return e
		}
		return &engine.Error{Class: engine.ErrStreamTruncated, Message: "stream ended inside an event"}
	case err == io.EOF && s.finished:
		s.res.E2E = time.Since(s.res.Start)
		return nil
	case (err == io.EOF || incomplete) && s.events == 0 && ctype != "text/event-stream":
		return &engine.Error{Class: engine.ErrStreamMalformed,
			Message: "response is not an event stream (Content-Type " + orNone(ctype) + ")"}
	case incomplete:
		return &engine.Error{Class: engine.ErrStreamTruncated, Message: "stream ended inside an event"}
	case err == io.EOF:
		return &engine.Error{Class: engine.ErrStreamTruncated, Message: "stream ended before " + s.dialect.endName()}
	case errors.Is(err, errEventTooLarge):
		return &engine.Error{Class: engine.ErrStreamMalformed, Message: err.Error()}
	}
	return c.fail(parent, ctx, err, phaseBody)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// headReader keeps the first bytes of a response body, so that a body which
// turns out not to be an event stream can still be read as an error.
type headReader struct {
	r    io.Reader
	head [1024]byte
	n    int
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += copy(h.head[h.n:], p[:n])
	return n, err
}

func (h *headReader) bytes() []byte { return h.head[:h.n] }

// bareError reads a whole-body JSON error object ({"error": ...} or vLLM's
// {"object": "error", "message": ...}).
func bareError(body []byte) (string, bool) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Object  string          `json:"object"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return "", false
	}
	msg, ok := errorObject(e.Error, e.Message, e.Object == "error")
	return truncate(msg, maxMessageLen), ok
}
