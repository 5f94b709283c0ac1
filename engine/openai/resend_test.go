package openai

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/llmload/llmload/engine"
)

// failingConns is a transport whose first failures attempts fail as a
// connection does under the request's write, after handing it a
// connection (reused or fresh) and taking its headers; then it is next.
type failingConns struct {
	next     http.RoundTripper
	failures int
	reused   bool
	err      error
	attempts atomic.Int32
}

func (f *failingConns) RoundTrip(req *http.Request) (*http.Response, error) {
	if int(f.attempts.Add(1)) > f.failures {
		return f.next.RoundTrip(req)
	}
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil {
		tr.GotConn(httptrace.GotConnInfo{Reused: f.reused})
		tr.WroteHeaders()
	}
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}

// closedUnder is the error of a body written through the connection (a
// body larger than the write buffer) after the transport closed it.
var closedUnder = &net.OpError{Op: "readfrom", Net: "tcp", Err: &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}}

// A request that met a kept-alive connection the transport closed under
// its write — as llama.cpp's server, which closes its connection after
// each streamed answer, makes it happen — is sent again, and the answer
// of the resend is its own; on a fresh connection, or reset by the
// server, it is the failure it was, never sent twice.
func TestSendResendsOnlyWhatNeverReachedTheServer(t *testing.T) {
	answer := llamaFile(t, "chat_stream.sse")
	reset := &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
	tests := []struct {
		name     string
		failures int
		reused   bool
		err      error
		class    string // "" for the answer
		attempts int32
		served   int32 // requests that reached the server
	}{
		{"closed under the write of a reused connection", 1, true, closedUnder, "", 2, 1},
		{"closed under the write, twice", 2, true, closedUnder, "", 3, 1},
		{"closed on every connection", 10, true, closedUnder, engine.ErrNetwork, maxResends + 1, 0},
		{"closed under the write of a fresh connection", 1, false, closedUnder, engine.ErrNetwork, 1, 0},
		{"reset by the server", 1, true, reset, engine.ErrConnReset, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var served atomic.Int32
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				script{steps: steps(0, answer)}.ServeHTTP(w, r)
			}))
			c := testClient(t, srv.URL+"/v1")
			f := &failingConns{next: c.transport, failures: tc.failures, reused: tc.reused, err: tc.err}
			c.http.Transport = f
			r := c.Chat(context.Background(), chatReq())
			class := ""
			if r.Err != nil {
				class = r.Err.Class
			}
			if class != tc.class || f.attempts.Load() != tc.attempts || served.Load() != tc.served {
				t.Errorf("class %q (%+v), %d attempts, %d served; want %q, %d, %d",
					class, r.Err, f.attempts.Load(), served.Load(), tc.class, tc.attempts, tc.served)
			}
			if tc.class == "" && (r.OutputTokens != 4 || r.TTFT <= 0) {
				t.Errorf("the resend's answer: %d tokens, TTFT %v; want llama.cpp's 4 tokens, streamed", r.OutputTokens, r.TTFT)
			}
		})
	}
}
