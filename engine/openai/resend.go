package openai

import (
	"errors"
	"net"
	"net/http"
)

// maxResends bounds how many times send resends a request whose kept-alive
// connection was found closed under its write: each time costs the pool
// one dead connection, and a pool rarely holds more than one such.
const maxResends = 3

// send does hreq, resending it when it met a kept-alive connection that
// the transport closed while the request was being written, because the
// server had closed it while idle: llama.cpp's server closes its
// connection after each streamed answer though it says keep-alive, and
// net/http's transport sees the end only once it has handed the
// connection to the next request (h1, the transport of HTTP/1.1 without a
// proxy, looks at an idle connection before it reuses it, and itself
// resends a request that found its connection closed before any of it was
// written; this is for the other transports). Such a request never reached the server (it had hung
// up before), so it is no failure of the server, and is sent again on
// another connection. The transport resends it only when it wrote nothing
// yet (see newRequest); a body larger than its write buffer is partly
// written before the close shows, and would be recorded as a network
// failure. t0 is the request's stamp, whose GotConn says whether the
// connection was reused; it stamps the resend again.
func (c *Client) send(hreq *http.Request, t0 *stamp) (*http.Response, error) {
	resp, err := c.http.Do(hreq)
	for range maxResends {
		if err == nil || !t0.reused.Load() || !closedUnderWrite(err) || hreq.Context().Err() != nil || hreq.GetBody == nil {
			break
		}
		body, berr := hreq.GetBody()
		if berr != nil {
			break
		}
		hreq = hreq.Clone(hreq.Context())
		hreq.Body = body
		resp, err = c.http.Do(hreq)
	}
	return resp, err
}

// closedUnderWrite reports a write that failed because our side had closed
// the connection (net.ErrClosed), not the server's reset or a timeout.
func closedUnderWrite(err error) bool {
	var op *net.OpError
	return errors.Is(err, net.ErrClosed) && errors.As(err, &op) && (op.Op == "write" || op.Op == "readfrom")
}
