package servermetrics

import (
	"crypto/tls"
	"net/http"
	"sync"
	"time"
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

// Endpoint is one Prometheus endpoint to scrape: a target's server, or
// one of its replicas.
type Endpoint struct {
	// Target is the name of the plan's target the endpoint serves; "" for
	// the one target.
	Target string
	URL    string
	// Header is sent with every scrape (the target's auth header, for an
	// endpoint found at its origin); its values never reach a Result.
	Header http.Header
	// Discovered says the URL was found at the target's origin (see
	// Discover), not named by the user.
	Discovered bool
	// GPUOnly says the endpoint was named as NVIDIA's DCGM exporter
	// (--gpu-metrics): anything else there is explained as not one.
	GPUOnly bool
	// TLS is the target's TLS configuration (a private CA, a client
	// certificate), used for an https endpoint; nil: the system's.
	TLS *tls.Config
}

// Scraper polls one or more Prometheus endpoints from StartAll until Stop,
// each in a goroutine of its own with its own client and timeout, so that
// a slow endpoint delays none of the others. Its methods are safe for
// concurrent use.
type Scraper struct {
	pollers []*poller
	every   time.Duration
	began   time.Time // when the pollers started: rounds count intervals from it

	stopOnce sync.Once
	res      *Result
}

// Start scrapes rawURL at once and then every interval (DefaultEvery when
// every ≤ 0, at least MinEvery) until Stop. Times in the series are
// seconds since start. Failures, a bad URL included, are recorded in the
// Result, never returned.
func Start(rawURL string, every time.Duration, start time.Time) *Scraper {
	return StartAll([]Endpoint{{URL: rawURL}}, every, start)
}

// StartAll is Start for several endpoints, all on one schedule: each one's
// Result is kept apart, and the series that add up are summed across them
// (see Stop). No endpoints: nil, which Stop takes.
func StartAll(endpoints []Endpoint, every time.Duration, start time.Time) *Scraper {
	return startAll(endpoints, every, start, Timeout)
}

// startAll is StartAll with a chosen per-scrape timeout.
func startAll(endpoints []Endpoint, every time.Duration, start time.Time, timeout time.Duration) *Scraper {
	if len(endpoints) == 0 {
		return nil
	}
	switch {
	case every <= 0:
		every = DefaultEvery
	case every < MinEvery:
		every = MinEvery
	}
	s := &Scraper{every: every, began: time.Now()}
	for _, ep := range endpoints {
		s.pollers = append(s.pollers, startPoller(ep, every, start, s.began, timeout))
	}
	return s
}

// Stop ends the scraping and returns what was seen: the one endpoint's
// Result, or of several a Result with each one's in Endpoints and their
// sums in Series (see Additive). Unless the schedule's latest scrape
// began less than a quarter interval ago, each endpoint whose previous
// scrape did not fail first takes one last scrape, so the end of the run
// is in the series; the endpoints stop together, so Stop takes at most
// about two Timeouts. Later calls return the same Result. A nil Scraper
// returns nil.
func (s *Scraper) Stop() *Result {
	if s == nil {
		return nil
	}
	s.stopOnce.Do(func() {
		final := time.Since(s.began)%s.every >= s.every/4
		results := make([]*Result, len(s.pollers))
		var wg sync.WaitGroup
		for i, p := range s.pollers {
			wg.Go(func() { results[i] = p.halt(final) })
		}
		wg.Wait()
		s.res = combine(results)
	})
	return s.res
}
