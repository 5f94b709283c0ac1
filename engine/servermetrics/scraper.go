package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine/redact"
)

// Defaults and bounds of a Scraper.
const (
	// DefaultEvery is the scrape interval used when Start is given none.
	DefaultEvery = 5 * time.Second
	// MinEvery is the shortest interval: faster polling would load the
	// server it watches.
	MinEvery = 100 * time.Millisecond
	// Timeout bounds one scrape, body included.
	Timeout = 2 * time.Second
	// MaxBodyBytes bounds a scrape's body; a bigger one is a failure.
	MaxBodyBytes = 16 << 20
)

// accept prefers the classic text format, which every inference server
// serves, and takes OpenMetrics when that is all there is.
const accept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// Scraper polls a Prometheus endpoint from Start until Stop, in one
// goroutine of its own. Its methods are safe for concurrent use.
type Scraper struct {
	url, redacted string
	redactor      *redact.Redactor // the URL's credentials, in every encoding, out of error messages
	every         time.Duration
	start         time.Time
	client        *http.Client

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}

	// Owned by the goroutine until done is closed.
	res        Result
	b          *builder
	errs       errorLog
	lastBegan  time.Time
	lastFailed bool
}

// Start scrapes rawURL at once and then every interval (DefaultEvery when
// every ≤ 0, at least MinEvery) until Stop. Times in the series are
// seconds since start. Failures, a bad URL included, are recorded in the
// Result, never returned.
func Start(rawURL string, every time.Duration, start time.Time) *Scraper {
	return startWith(rawURL, every, start, Timeout)
}

// startWith is Start with a chosen per-scrape timeout.
func startWith(rawURL string, every time.Duration, start time.Time, timeout time.Duration) *Scraper {
	switch {
	case every <= 0:
		every = DefaultEvery
	case every < MinEvery:
		every = MinEvery
	}
	s := &Scraper{
		url: rawURL, redacted: redact.URL(rawURL), redactor: redact.New("", rawURL),
		every: every, start: start, client: newClient(timeout),
		stop: make(chan struct{}), done: make(chan struct{}), b: newBuilder(),
	}
	s.res = Result{URL: s.redacted, EveryS: every.Seconds()}
	go s.run()
	return s
}

// newClient returns a client of the scraper's own, so that its connection
// never queues behind the load's, with the timeout covering the body.
func newClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1
	tr.ResponseHeaderTimeout = timeout
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Stop ends the scraping and returns what was seen. Unless the previous
// scrape failed or began less than a quarter interval ago, it first takes
// one last scrape, so the end of the run is in the series; Stop therefore
// takes at most about two Timeouts. Later calls return the same Result. A
// nil Scraper returns nil.
func (s *Scraper) Stop() *Result {
	if s == nil {
		return nil
	}
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return &s.res
}

// run is the scraper's goroutine.
func (s *Scraper) run() {
	defer close(s.done)
	defer s.client.CloseIdleConnections()
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	s.scrape()
	for {
		select {
		case <-tick.C:
			s.scrape()
		case <-s.stop:
			if !s.lastFailed && time.Since(s.lastBegan) >= s.every/4 {
				s.scrape()
			}
			s.res.Series, s.res.Errors = s.b.series(), s.errs.lines()
			s.b.describe(&s.res)
			return
		}
	}
}

// scrape takes one scrape and records it.
func (s *Scraper) scrape() {
	s.lastBegan = time.Now()
	s.res.Scrapes++
	fams, at, err := s.fetch()
	s.lastFailed = err != nil
	if err != nil {
		s.res.Failures++
		s.errs.add(s.scrub(err.Error()))
		return
	}
	s.b.add(at.Sub(s.start).Seconds(), fams)
}

// fetch gets and parses one exposition; at is when its headers arrived,
// the closest the client knows to when the server took the snapshot.
func (s *Scraper) fetch() (fams families, at time.Time, err error) {
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		return nil, at, fmt.Errorf("invalid metrics URL: %w", unwrapURLError(err))
	}
	req.Header.Set("Accept", accept)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, at, describe(err, s.client.Timeout)
	}
	at = time.Now()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, at, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	switch {
	case err != nil:
		return nil, at, describe(err, s.client.Timeout)
	case len(body) > MaxBodyBytes:
		return nil, at, fmt.Errorf("body larger than %d MB", MaxBodyBytes>>20)
	}
	if fams, err = decode(bytes.NewReader(body), resp.Header); err == nil && len(fams) == 0 {
		err = errors.New("the response holds no metrics")
	}
	return fams, at, err
}

// describe names a transport failure without the URL, which the caller
// already knows and which may hold credentials.
func describe(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("timeout after %v", timeout)
	}
	return unwrapURLError(err)
}

// unwrapURLError drops the *url.Error wrapper, whose message repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// scrub removes the URL's credentials from a message, in any encoding a
// server might echo them in, as a last guard.
func (s *Scraper) scrub(msg string) string {
	msg = strings.ReplaceAll(msg, s.url, s.redacted)
	return oneLine(s.redactor.Redact(msg), 300)
}
