package servermetrics

import (
	"context"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/redact"
)

// poller scrapes one endpoint of a Scraper, in one goroutine of its own
// with a client of its own, so that a slow endpoint delays no other.
type poller struct {
	ep        Endpoint
	redacted  string
	redactors []*redact.Redactor // the URL's and the header's credentials, in every encoding, out of messages
	every     time.Duration
	start     time.Time // the origin of the series' times
	began     time.Time // the origin of the rounds, shared by the Scraper's pollers
	client    *http.Client

	stop  chan struct{}
	final bool // take one last scrape on stop; set before stop is closed
	done  chan struct{}

	// Owned by the goroutine until done is closed.
	res        Result
	b          *builder
	errs       errorLog
	lastRound  int
	lastFailed bool
}

// startPoller starts scraping ep at once and then every interval.
func startPoller(ep Endpoint, every time.Duration, start, began time.Time, timeout time.Duration) *poller {
	p := &poller{
		ep: ep, redacted: redact.URL(ep.URL), redactors: redactorsFor(ep.URL, ep.Header),
		every: every, start: start, began: began, client: newClient(timeout, ep.TLS),
		stop: make(chan struct{}), done: make(chan struct{}), b: newBuilder(), lastRound: -1,
	}
	p.res = Result{URL: p.redacted, Target: ep.Target, Discovered: ep.Discovered, EveryS: every.Seconds(), GPUOnly: ep.GPUOnly}
	go p.run()
	return p
}

// redactorsFor scrubs a URL's credentials and a header's values, the API
// key of "Bearer <key>" among them.
func redactorsFor(rawURL string, header http.Header) []*redact.Redactor {
	rs := []*redact.Redactor{redact.New("", rawURL)}
	for _, values := range header {
		for _, v := range values {
			rs = append(rs, redact.New(strings.TrimPrefix(v, "Bearer ")))
		}
	}
	return rs
}

// halt ends the goroutine, after one last scrape when final, and returns
// what it saw.
func (p *poller) halt(final bool) *Result {
	p.final = final
	close(p.stop)
	<-p.done
	return &p.res
}

// run is the poller's goroutine.
func (p *poller) run() {
	defer close(p.done)
	defer p.client.CloseIdleConnections()
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	p.scrape(p.roundAt(time.Now()))
	for {
		select {
		case <-tick.C:
			p.scrape(p.roundAt(time.Now()))
		case <-p.stop:
			if p.final && !p.lastFailed {
				p.scrape(p.lastRound + 1)
			}
			p.res.Series, p.res.Errors = p.b.series(), p.errs.lines()
			p.b.describe(&p.res)
			return
		}
	}
}

// roundAt is the round of the schedule a scrape beginning at now belongs
// to: the interval nearest to it since the Scraper began, which is the
// same on every endpoint, so that their points of one moment can be
// summed. A scrape late after a slow one still takes a round of its own.
func (p *poller) roundAt(now time.Time) int {
	r := int(math.Round(float64(now.Sub(p.began)) / float64(p.every)))
	return max(r, p.lastRound+1)
}

// scrape takes one scrape of the round and records it.
func (p *poller) scrape(round int) {
	p.lastRound = round
	p.res.Scrapes++
	fams, at, err := get(context.Background(), p.client, p.ep.URL, p.ep.Header)
	p.lastFailed = err != nil
	if err != nil {
		p.res.Failures++
		p.errs.add(p.scrub(err.Error()))
		return
	}
	p.b.add(at.Sub(p.start).Seconds(), round, fams)
}

// scrub removes the URL's and the header's credentials from a message, in
// any encoding a server might echo them in, as a last guard.
func (p *poller) scrub(msg string) string {
	return scrub(msg, p.ep.URL, p.redacted, p.redactors)
}

// scrub is a message with rawURL written as redacted and what the
// redactors know removed, on one short line.
func scrub(msg, rawURL, redacted string, rs []*redact.Redactor) string {
	msg = strings.ReplaceAll(msg, rawURL, redacted)
	for _, r := range rs {
		msg = r.Redact(msg)
	}
	return oneLine(msg, 300)
}
