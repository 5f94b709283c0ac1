package export

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath is where --listen serves the series.
const MetricsPath = "/metrics"

// listener serves /metrics for a Prometheus that scrapes: the text format,
// or the protobuf format (with native histograms) when the scraper
// negotiates it, as promhttp does.
type listener struct {
	ln      net.Listener
	srv     *http.Server
	scrapes atomic.Int64
	// final is when the final counts were in place (unix ns; 0 before):
	// a scrape that began after it has read them.
	final   atomic.Int64
	once    sync.Once
	scraped chan struct{}
}

// CheckListen checks a --listen address: host:port or :port.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port or :port (%w)", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// newListener binds addr now, so that a port in use fails the run early.
func newListener(addr string, x *Exporter) (*listener, error) {
	if err := CheckListen(addr); err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	l := &listener{ln: ln, scraped: make(chan struct{})}
	metrics := promhttp.HandlerFor(x.reg, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc(MetricsPath, func(w http.ResponseWriter, r *http.Request) {
		began := time.Now().UnixNano()
		x.refresh()
		metrics.ServeHTTP(w, r)
		l.scrapes.Add(1)
		if f := l.final.Load(); f != 0 && began >= f {
			l.once.Do(func() { close(l.scraped) })
		}
	})
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return l, nil
}

func (l *listener) addr() string { return l.ln.Addr().String() }

func (l *listener) start() {
	go l.srv.Serve(l.ln) //nolint:errcheck // ErrServerClosed at finish
}

// finish marks the final counts in place, serves until a scrape has read
// them or wait has passed, and stops the server.
func (l *listener) finish(wait time.Duration, log func(string, ...any)) Health {
	l.final.Store(time.Now().UnixNano())
	if log != nil && wait > 0 {
		log("--listen: the run has ended; serving http://%s%s until a scrape reads the final counts (at most %v)",
			l.addr(), MetricsPath, wait)
	}
	h := Health{Kind: plan.ExportListen, Target: l.addr()}
	select {
	case <-l.scraped:
	case <-time.After(wait):
		h.Failures = 1
		h.LastError = fmt.Sprintf("no scrape read the final counts within %v of the run's end: a scraper may miss the last seconds", wait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.srv.Shutdown(ctx) //nolint:errcheck // a scrape still running is cut
	h.Scrapes = l.scrapes.Load()
	return h
}
