package servermetrics

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"time"
)

// accept prefers the classic text format, which every inference server
// serves, and takes OpenMetrics when that is all there is.
const accept = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// errHTML is a page where an exposition should be: the URL is most often
// a web UI's or a gateway's, not the server's /metrics.
var errHTML = errors.New("an HTML page, not the Prometheus text format")

// newClient returns a client of the scraper's own, so that its connection
// never queues behind the load's, with the timeout covering the body.
func newClient(timeout time.Duration, tlsConf *tls.Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1
	tr.ResponseHeaderTimeout = timeout
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf.Clone()
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// NewClient is a client for Probe and Discover that reaches an https
// endpoint as the target's own requests do: with its private CA, client
// certificate or server name (tlsConf; nil: the system's defaults).
func NewClient(tlsConf *tls.Config) *http.Client { return newClient(ProbeTimeout, tlsConf) }

// get takes one GET of a Prometheus endpoint, with header, and parses it;
// at is when its headers arrived, the closest the client knows to when
// the server took the snapshot. Errors never hold the URL, which the
// caller knows and which may hold credentials.
func get(ctx context.Context, client *http.Client, rawURL string, header http.Header) (fams families, at time.Time, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, at, fmt.Errorf("invalid metrics URL: %w", unwrapURLError(err))
	}
	for name, values := range header {
		req.Header[name] = values
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, at, describe(err, client.Timeout)
	}
	at = time.Now()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, at, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	switch {
	case err != nil:
		return nil, at, describe(err, client.Timeout)
	case len(body) > MaxBodyBytes:
		return nil, at, fmt.Errorf("body larger than %d MB", MaxBodyBytes>>20)
	case isHTML(resp.Header, body):
		return nil, at, errHTML
	}
	if fams, err = decode(bytes.NewReader(body), resp.Header); err == nil && len(fams) == 0 {
		err = errors.New("the response holds no metrics")
	}
	return fams, at, err
}

// isHTML says whether a response is a web page: by its Content-Type, or,
// when a server sends none, by its first byte.
func isHTML(h http.Header, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err == nil {
		return mt == "text/html" || mt == "application/xhtml+xml"
	}
	return bytes.HasPrefix(bytes.TrimSpace(body), []byte("<"))
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
