package sim

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/rxtime"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sim: server closed")

// closeWait bounds how long Close waits for handlers to return.
const closeWait = 5 * time.Second

// Server is the simulated OpenAI-compatible inference server. It is an
// http.Handler, usable in-process or listening on its own through Start.
// Safe for concurrent use.
type Server struct {
	cfg     Config
	sched   *scheduler
	cache   *prefixCache // nil when disabled
	metrics *serverMetrics
	truth   *truthLog   // nil without Config.TruthLog
	spans   *spanner    // nil without Config.OTLPTracesEndpoint
	spanErr error       // why the endpoint's exporter could not be built
	spec    *specDecode // nil without Config.SpecTokens
	born    int64       // Unix time of New, the model's "created"
	// flushWait bounds Close's flush of the spans.
	flushWait time.Duration

	ctx    context.Context // ends in-flight requests on Close
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	handlers  sync.WaitGroup
	httpSrv   *http.Server
	serveDone chan struct{}

	requests, rejected, completed, canceled atomic.Int64
	defects, cachedTokens                   atomic.Int64
	seq                                     atomic.Uint64 // numbers responses
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Running   int   // requests holding a batch slot (prefill or decode)
	Waiting   int   // requests queued for a slot
	Requests  int64 // requests received on the generating and embedding routes
	Rejected  int64 // of those, answered with an error status
	Completed int64 // of those, generated to the end
	Canceled  int64 // of those, ended early by the client or by Close
	// Defects counts requests answered with a Config.Defects misbehaviour
	// (a "200" one also counts as Completed or Canceled).
	Defects int64
	// CachedTokens is the total of prompt tokens found in the prefix cache.
	CachedTokens int64
	// Spans counts the spans sent to Config.OTLPTracesEndpoint.
	Spans SpanStats
	// Spec holds the speculative-decoding counters (Config.SpecTokens).
	Spec SpecStats
}

// New returns a server for cfg, with defaults for zero fields and for the
// out-of-range values Config.Validate reports.
func New(cfg Config) *Server {
	s := newServer(cfg)
	if s.cfg.OTLPTracesEndpoint != "" {
		exp, err := newExporter(&s.cfg)
		if err != nil {
			s.spanErr = fmt.Errorf("sim: traces: %w", err)
		} else {
			s.spans = newSpanner(exp)
		}
	}
	return s
}

// newServer is New without span export, which a test may plug in.
func newServer(cfg Config) *Server {
	s := &Server{cfg: cfg.withDefaults(), born: time.Now().Unix(), flushWait: traceFlushWait}
	s.spec = newSpecDecode(&s.cfg)
	s.sched = newScheduler(&s.cfg)
	s.cache = newPrefixCache(s.cfg.PrefixCacheTokens)
	s.metrics = newServerMetrics()
	s.truth = newTruthLog(s.cfg.TruthLog)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	running, waiting := s.sched.counts()
	return Stats{
		Running:   running,
		Waiting:   waiting,
		Requests:  s.requests.Load(),
		Rejected:  s.rejected.Load(),
		Completed: s.completed.Load(),
		Canceled:  s.canceled.Load(),

		Defects:      s.defects.Load(),
		CachedTokens: s.cachedTokens.Load(),
		Spans:        s.spans.stats(),
		Spec:         s.spec.stats(),
	}
}

// FlushSpans exports the spans the server holds now, rather than at its
// batcher's next round; nil without Config.OTLPTracesEndpoint.
func (s *Server) FlushSpans(ctx context.Context) error { return s.spans.flush(ctx) }

// ServeHTTP routes POST /v1/chat/completions, /v1/completions,
// /v1/responses, /v1/messages, /v1/embeddings, /v1/audio/transcriptions
// and /v1/audio/speech, GET /v1/models, GET
// /health and GET /metrics; anything else gets an OpenAI-style 404 or 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		newAPIError(http.StatusServiceUnavailable, "", "the simulator is shutting down").write(w)
		return
	}
	defer s.handlers.Done()
	rt, ok := routes[r.URL.Path]
	switch {
	case !ok:
		newAPIError(http.StatusNotFound, "", "unknown route %s %s", r.Method, quoteShort(r.URL.Path)).write(w)
	case !rt.allows(r.Method):
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		newAPIError(http.StatusMethodNotAllowed, "", "method %s is not allowed on %s", quoteShort(r.Method), r.URL.Path).writeFor(w, rt.api)
	case rt.auth && !s.authorized(r, rt.api):
		if rt.counted {
			s.requests.Add(1)
			s.rejected.Add(1)
		}
		newAPIError(http.StatusUnauthorized, "", "%s", rt.api.keyHint()).writeFor(w, rt.api)
	default:
		rt.serve(s, w, r)
	}
}

// route is one endpoint.
type route struct {
	methods []string
	auth    bool    // needs the API key, when one is set
	counted bool    // counted in Stats.Requests
	api     apiKind // whose shape its errors take
	serve   func(*Server, http.ResponseWriter, *http.Request)
}

var routes = map[string]route{
	"/v1/chat/completions":     {methods: []string{http.MethodPost}, auth: true, counted: true, serve: (*Server).serveChat},
	"/v1/completions":          {methods: []string{http.MethodPost}, auth: true, counted: true, api: apiText, serve: (*Server).serveTextCompletion},
	"/v1/responses":            {methods: []string{http.MethodPost}, auth: true, counted: true, api: apiResponses, serve: (*Server).serveResponses},
	"/v1/messages":             {methods: []string{http.MethodPost}, auth: true, counted: true, api: apiMessages, serve: (*Server).serveMessages},
	"/v1/embeddings":           {methods: []string{http.MethodPost}, auth: true, counted: true, api: apiEmbeddings, serve: (*Server).serveEmbeddings},
	"/v1/audio/transcriptions": {methods: []string{http.MethodPost}, auth: true, counted: true, serve: (*Server).serveTranscription},
	"/v1/audio/speech":         {methods: []string{http.MethodPost}, auth: true, counted: true, serve: (*Server).serveSpeech},
	"/v1/models":               {methods: []string{http.MethodGet, http.MethodHead}, auth: true, serve: (*Server).serveModels},
	"/health":                  {methods: []string{http.MethodGet, http.MethodHead}, serve: (*Server).serveHealth},
	"/metrics":                 {methods: []string{http.MethodGet, http.MethodHead}, serve: (*Server).serveMetrics},
}

func (rt route) allows(method string) bool {
	for _, m := range rt.methods {
		if m == method {
			return true
		}
	}
	return false
}

// authorized checks the key in constant time: the x-api-key header for
// the Messages API, as Anthropic wants it; for the others the bearer
// token, or the key alone in api-key (Azure OpenAI's) or x-api-key (some
// gateways'), so that a scenario written for those runs here unchanged.
func (s *Server) authorized(r *http.Request, api apiKind) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	key := []byte(s.cfg.APIKey)
	xKey := r.Header.Get("X-Api-Key")
	if api == apiMessages {
		return subtle.ConstantTimeCompare([]byte(xKey), key) == 1
	}
	for _, alone := range []string{xKey, r.Header.Get("Api-Key")} {
		if alone != "" {
			return subtle.ConstantTimeCompare([]byte(alone), key) == 1
		}
	}
	const scheme = "bearer "
	h := r.Header.Get("Authorization")
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(scheme):]), key) == 1
}

// enter registers a handler unless the server is closed; Close waits for
// registered handlers.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in the
// background until Close. It returns the base URL clients use, such as
// "http://127.0.0.1:8000/v1".
func (s *Server) Start(addr string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return "", ErrClosed
	case s.httpSrv != nil:
		return "", errors.New("sim: server already started")
	case s.spanErr != nil:
		return "", s.spanErr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("sim: %w", err)
	}
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnContext: withConn}
	ln = rxtime.Listener{Listener: ln}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.httpSrv.Serve(ln) // always ErrServerClosed once Close runs
	}()
	return baseURL(ln.Addr()), nil
}

// connKey holds a request's connection in its context.
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, rxtime.Of(c))
}

// arrival is when r reached the server: the kernel's receive time of the
// read that brought its headers where the connection keeps one (so time
// spent queued for the accept loop or the CPU counts, as it does for a
// real server's client), else now.
func arrival(r *http.Request) time.Time {
	c, _ := r.Context().Value(connKey{}).(*rxtime.Conn)
	return rxtime.Stamp(c, time.Time{})
}

// baseURL names a listening address the way a client on this machine
// reaches it: an unspecified host (":8000") becomes 127.0.0.1.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/v1"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/v1"
}

// Close stops listening, ends in-flight streams (clients see them cut
// before [DONE]), answers non-streamed requests still in the queue or the
// batch with 503, waits briefly for handlers to return and flushes the
// truth log and, within a few seconds, the spans. Later requests get 503
// too. Calling it again does nothing.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hs := s.httpSrv
	s.mu.Unlock()

	s.cancel()
	var err error
	if hs != nil {
		err = hs.Close()
		<-s.serveDone
	}
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
		err = errors.Join(err, fmt.Errorf("sim: handlers still running %v after close", closeWait))
	}
	if terr := s.truth.flush(); terr != nil {
		err = errors.Join(err, fmt.Errorf("sim: truth log: %w", terr))
	}
	if serr := s.spans.shutdown(s.flushWait); serr != nil {
		err = errors.Join(err, fmt.Errorf("sim: traces: %w", serr))
	}
	return err
}

// requestContext ends when the request's context does or the server closes.
func (s *Server) requestContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}
