package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/redact"
)

// ProbeTimeout bounds Probe and Discover, body included: a check before
// the load must not hold it up.
const ProbeTimeout = 2 * time.Second

// ErrUnknownServer is Discover's error when the target's origin serves a
// Prometheus exposition, but of no server llmload knows: scraping it
// would give no series.
var ErrUnknownServer = errors.New("a Prometheus exposition of no server llmload knows")

// Found is what one read of a Prometheus endpoint showed.
type Found struct {
	URL string // as read, credentials included: redact before printing
	// Server is the kind of known server whose names it holds (see Kind);
	// "" for none.
	Server string
	// Families is how many metric families it held, and Examples a few
	// of their names when none was a known server's.
	Families int
	Examples []string
}

// String says what was found where, credentials removed: "vLLM's at
// http://host:8000/metrics".
func (f Found) String() string {
	if f.Server == "" {
		return "an unknown server's at " + redact.URL(f.URL)
	}
	return ServerName(f.Server) + "'s at " + redact.URL(f.URL)
}

// Probe reads rawURL once, with header, as a Prometheus exposition. Its
// error says why the URL is none (an HTTP status, an HTML page, another
// format, a timeout), without the URL or its or the header's credentials.
// A nil client is one of the scraper's own with ProbeTimeout.
func Probe(ctx context.Context, rawURL string, header http.Header, client *http.Client) (Found, error) {
	if client == nil {
		client = newClient(ProbeTimeout, nil)
		defer client.CloseIdleConnections()
	}
	f := Found{URL: rawURL}
	fams, _, err := get(ctx, client, rawURL, header)
	if err != nil {
		return f, errors.New(scrub(err.Error(), rawURL, redact.URL(rawURL), redactorsFor(rawURL, header)))
	}
	f.Server, f.Families = kindOfFamilies(fams), len(fams)
	if f.Server == "" {
		f.Examples = examples(familyNames(fams), maxExamples)
	}
	return f, nil
}

// Discover looks for the server's own metrics at the origin of its API's
// baseURL (scheme://host:port/metrics, where vLLM, SGLang, TGI and
// llama-server --metrics serve them) with one Probe, and keeps them only
// when they are a known server's: otherwise the error says why not
// (ErrUnknownServer for an exposition of unknown names). Found.URL is the
// URL tried, also on error.
func Discover(ctx context.Context, baseURL string, header http.Header, client *http.Client) (Found, error) {
	origin, err := OriginURL(baseURL)
	if err != nil {
		return Found{}, err
	}
	f, err := Probe(ctx, origin, header, client)
	switch {
	case err != nil:
		return f, err
	case f.Server == "":
		return f, fmt.Errorf("%w (%s, e.g. %s; known: %s)", ErrUnknownServer,
			plural(f.Families, "family", "families"), strings.Join(f.Examples, ", "), knownServers())
	}
	return f, nil
}

// OriginURL is the /metrics URL at the origin of baseURL: its scheme,
// user info and host, without its path and query.
func OriginURL(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base URL %q is not an http(s) URL", redact.URL(baseURL))
	}
	origin := url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: "/metrics"}
	return origin.String(), nil
}

// Kind is the kind of known server (ServerVLLM, ServerSGLang, ServerTGI,
// ServerLlamaCpp) whose metric names a Prometheus text exposition holds
// most of; "" when it holds none, or is no exposition. llmload's own
// simulator (llmload mock) exposes vLLM's names, and is vLLM to it.
func Kind(body []byte) string {
	fams, err := decode(bytes.NewReader(body), nil)
	if err != nil {
		return ""
	}
	return kindOfFamilies(fams)
}

// kindOfFamilies is the server most of a scrape's family names belong to
// (by their prefix: "vllm:", "sglang:", "tgi_", "llamacpp:"); the earlier
// in servers on a tie, "" for none.
func kindOfFamilies(fams families) string {
	counts := map[string]int{}
	for name := range fams {
		counts[kindOf(name)]++
	}
	best, most := "", 0
	for _, s := range servers {
		if counts[s.kind] > most {
			best, most = s.kind, counts[s.kind]
		}
	}
	return best
}

// familyNames are a scrape's family names.
func familyNames(fams families) []string {
	names := make([]string, 0, len(fams))
	for name := range fams {
		names = append(names, name)
	}
	return names
}
