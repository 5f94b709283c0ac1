package export

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	dto "github.com/prometheus/client_model/go"
)

// pusher sends a gathering of the series to one receiver, retrying
// briefly; ctx bounds the whole push.
type pusher interface {
	push(ctx context.Context, fams []*dto.MetricFamily, now time.Time) error
}

// output is one pushed export and its account of pushes.
type output struct {
	kind, target string // target without credentials
	p            pusher
	redact       func(string) string

	mu       sync.Mutex
	pushes   int64
	failures int64
	lastErr  string
}

// book counts one push; it reports whether this was the output's first
// failure, which is worth a line while the run goes on.
func (o *output) book(err error) (first bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pushes++
	if err == nil {
		return false
	}
	o.failures++
	o.lastErr = truncate(o.redact(err.Error()), maxErrorLen)
	return o.failures == 1
}

func (o *output) lastError() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastErr
}

func (o *output) health() Health {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Health{Kind: o.kind, Target: o.target, Pushes: o.pushes, Failures: o.failures, LastError: o.lastErr}
}

// maxErrorLen bounds an error kept in the result: a receiver's error page
// can be long.
const maxErrorLen = 300

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Health is how one export fared over the run.
type Health struct {
	Kind   string // engine.ExportPrometheusRW, ExportOTLP or ExportListen
	Target string // the URL without credentials, or the listen address
	// Pushes counts the pushes (the final one included) and Failures those
	// that failed after their retries; for listen, Scrapes counts the
	// scrapes served and Failures is 1 when no scrape read the final counts.
	Pushes, Failures, Scrapes int64
	LastError                 string
}

// Warning says what failed; "" when nothing did.
func (h Health) Warning() string {
	switch {
	case h.Failures == 0:
		return ""
	case h.Kind == plan.ExportListen:
		return fmt.Sprintf("export listen %s: %s", h.Target, h.LastError)
	case h.Failures == h.Pushes:
		return fmt.Sprintf("export %s %s: every push failed (%d; last: %s): the receiver has none of this run",
			h.Kind, h.Target, h.Pushes, h.LastError)
	}
	return fmt.Sprintf("export %s %s: %d of %d pushes failed (last: %s)", h.Kind, h.Target, h.Failures, h.Pushes, h.LastError)
}

// redactor scrubs a push's errors of the URL's credentials and of the
// headers' values (an Authorization value, and its token alone).
func redactor(url string, headers map[string]string) func(string) string {
	rs := []*redact.Redactor{redact.New("", url)}
	for _, v := range headers {
		rs = append(rs, redact.New(v))
		if _, token, ok := strings.Cut(v, " "); ok && len(token) >= 4 {
			rs = append(rs, redact.New(token))
		}
	}
	return func(s string) string {
		for _, r := range rs {
			s = r.Redact(s)
		}
		return s
	}
}

// headerTransport adds the configured headers to every push.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.next.RoundTrip(r)
}

// client is cfg.Client with the headers added.
func client(cfg Config) *http.Client {
	c := *cfg.Client
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = headerTransport{next: next, headers: cfg.Export.Headers}
	return &c
}
