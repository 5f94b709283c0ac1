package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzAnswer gives the transport whatever bytes a server may send, then
// the server's close: it returns an answer or an error, never panics nor
// hangs, and the next request is served on a sound connection: the one
// the server closed is never reused.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nrest",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/2.0 200 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"garbage\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n continued\r\n\r\n",
		"HTTP/1.1 200 OK\n\nbare line feeds",
		"",
	} {
		f.Add(seed)
	}
	var answer atomic.Pointer[string] // the current input; one server for every input, or the ports run out
	// closed says the server has closed the connection it answered the
	// input on: a request sent before that close reaches it would meet
	// HTTP/1.1's own race (a server that closes without saying so), which
	// no client can tell from a reset.
	closed := make(chan struct{}, 1)
	srv := newRawServer(f, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, ok := readRequest(br)
			if !ok {
				return
			}
			if req.Header.Get("X-Then") == "" {
				io.WriteString(c, *answer.Load())
				c.Close()
				closed <- struct{}{}
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	tr := newTransport() // one for every input: its kept-alive connection meets the next input too
	f.Fuzz(func(t *testing.T, in string) {
		answer.Store(&in)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if resp, err := post(t, tr, ctx, srv.url()); err == nil {
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("%q: hung", in)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: the server never answered", in)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.url(), strings.NewReader("x"))
		req.Header.Set("X-Then", "1")
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%q: the next request: %v", in, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != "ok" || resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: the next request got %d %q, %v", in, resp.StatusCode, got, err)
		}
	})
}
