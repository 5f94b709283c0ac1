package run

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/openai"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/servermetrics"
)

// metricsEndpoints are the Prometheus endpoints the run scrapes, resolved
// before any load: each target's metrics URLs, each read once and an error
// when it is no Prometheus exposition, or, for a target that names none
// and has not turned the look off (metrics_url = false), the /metrics
// found at its origin. What discovery found, or why it found nothing, is
// logged; it never fails the run.
func (c *Config) metricsEndpoints(ctx context.Context) ([]servermetrics.Endpoint, error) {
	var eps []servermetrics.Endpoint
	for _, t := range c.scrapedTargets() {
		found, err := c.targetEndpoints(ctx, t)
		if err != nil {
			return nil, err
		}
		for _, ep := range found {
			if !slices.ContainsFunc(eps, func(e servermetrics.Endpoint) bool { return e.URL == ep.URL }) {
				eps = append(eps, ep)
			}
		}
	}
	return eps, nil
}

// scrapedTargets are the targets whose metrics are read: the one target,
// or each of several and then the URLs they share in Plan.Target, which
// has no origin of its own to look at.
func (c *Config) scrapedTargets() []plan.Target {
	if len(c.Plan.Targets) == 0 {
		return []plan.Target{c.Plan.Target}
	}
	shared := c.Plan.Target
	shared.BaseURL, shared.Name = "", ""
	return append(slices.Clone(c.Plan.Targets), shared)
}

// targetEndpoints are one target's endpoints: its metrics URLs, checked,
// or the one discovered at its origin.
func (c *Config) targetEndpoints(ctx context.Context, t plan.Target) ([]servermetrics.Endpoint, error) {
	urls := metricsURLs(t)
	if len(urls) == 0 {
		return c.discover(ctx, t), nil
	}
	tlsConf, client := targetClient(t)
	defer client.CloseIdleConnections()
	eps := make([]servermetrics.Endpoint, 0, len(urls))
	for _, u := range urls {
		if _, err := servermetrics.Probe(ctx, u, nil, client); err != nil {
			return nil, fmt.Errorf("%s: %s could not be read as the server's Prometheus metrics, no load sent: %w", metricsSource(t), redact.URL(u), err)
		}
		eps = append(eps, servermetrics.Endpoint{Target: t.Name, URL: u, TLS: tlsConf})
	}
	return eps, nil
}

// metricsURLs are a target's metrics URLs, the first and the further ones.
func metricsURLs(t plan.Target) []string {
	urls := slices.Clone(t.MetricsURLs)
	if t.MetricsURL != "" {
		urls = append([]string{t.MetricsURL}, urls...)
	}
	return slices.DeleteFunc(urls, func(u string) bool { return u == "" })
}

// metricsSource names the flag or option a target's metrics URLs come
// from, for the errors that reject one.
func metricsSource(t plan.Target) string {
	if t.Name == "" {
		return "--metrics-url or options.target.metrics_url"
	}
	return "options.targets." + t.Name + ".metrics_url"
}

// discover looks for the target's metrics at its origin, with the
// target's API key, and says what it found or why it found nothing.
func (c *Config) discover(ctx context.Context, t plan.Target) []servermetrics.Endpoint {
	if t.NoMetrics || t.BaseURL == "" {
		return nil
	}
	who := ""
	if t.Name != "" {
		who = "target " + t.Name + ": "
	}
	header := originHeader(t)
	tlsConf, client := targetClient(t)
	defer client.CloseIdleConnections()
	f, err := servermetrics.Discover(ctx, t.BaseURL, header, client)
	if err != nil {
		where := ""
		if f.URL != "" {
			where = redact.URL(f.URL) + ": "
		}
		c.log("server metrics: %snone scraped: %s%v; name the endpoint with %s, or set it to false to skip this look",
			who, where, redact.New(t.APIKey).Redact(err.Error()), metricsSource(t))
		return nil
	}
	c.log("server metrics: %sfound %s", who, f)
	return []servermetrics.Endpoint{{Target: t.Name, URL: f.URL, Header: header, Discovered: true, TLS: tlsConf}}
}

// originHeader is what the target's requests carry besides their body:
// its API key as they send it (plan.Target.Auth) and its own headers (a
// gateway's tenant or token), so that an origin that guards /metrics as
// it guards the API answers the look; nil when there is neither.
func originHeader(t plan.Target) http.Header {
	h := http.Header{}
	for _, hd := range t.Headers {
		h.Set(hd.Name, hd.Value)
	}
	if name, value := openai.Credential(t); name != "" {
		h.Set(name, value)
	}
	if len(h) == 0 {
		return nil
	}
	return h
}

// targetClient is a client for the target's metrics that speaks TLS as
// its requests do; a target whose TLS files cannot be read (its own
// client refused them first) gets the system's defaults.
func targetClient(t plan.Target) (*tls.Config, *http.Client) {
	conf, err := openai.TLSConfig(t.TLS)
	if err != nil {
		conf = nil
	}
	return conf, servermetrics.NewClient(conf)
}

// startScraper scrapes the endpoints from start on, and lets a capacity
// search wait between probes for the servers' own queues to empty; nil
// without endpoints.
func (c *Config) startScraper(eps []servermetrics.Endpoint, eng *executor.Engine, start time.Time) *servermetrics.Scraper {
	if len(eps) == 0 {
		return nil
	}
	every := c.Plan.Target.MetricsEvery
	for _, t := range c.Plan.Targets {
		every = cmp.Or(every, t.MetricsEvery)
	}
	every = cmp.Or(every, plan.DefaultMetricsEvery)
	if len(eps) > 1 {
		urls := make([]string, len(eps))
		for i, ep := range eps {
			urls[i] = redact.URL(ep.URL)
		}
		c.log("server metrics: %d endpoints every %v, summed where the figures add up: %s", len(eps), every, strings.Join(urls, ", "))
	}
	s := servermetrics.StartAll(eps, every, start)
	eng.SetServerQueue(s)
	return s
}
