package h1

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkRoundTrip is one short exchange (a 200-byte POST, a chunked
// answer of two events) on a kept-alive loopback connection, through
// this transport and through net/http's, with goroutines as the
// benchmark's parallelism; the server is a raw one in this process. It
// also reports the goroutines each transport adds per connection.
//
//	go test -run '^$' -bench RoundTrip -benchmem ./engine/h1/
func BenchmarkRoundTrip(b *testing.B) {
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, ev := range []string{"data: {\"choices\":[\"a\"]}\n\n", "data: [DONE]\n\n"} {
		answer += fmt.Sprintf("%x\r\n%s\r\n", len(ev), ev)
	}
	answer += "0\r\n\r\n"
	srv := newRawServer(b, answers(answer))
	body := bytes.Repeat([]byte("x"), 200)
	for _, tc := range []struct {
		name string
		tr   http.RoundTripper
	}{
		{"h1", &Transport{MaxIdleConnsPerHost: 256, ReadBufferSize: 2 << 10, WriteBufferSize: 1 << 10}},
		{"net-http", &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true, ReadBufferSize: 2 << 10, WriteBufferSize: 1 << 10}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer tc.tr.(interface{ CloseIdleConnections() }).CloseIdleConnections()
			do := func() error {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.url(), bytes.NewReader(body))
				resp, err := tc.tr.RoundTrip(req)
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return err
			}
			perConn := goroutinesPerConn(b, tc.tr, srv)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(perConn, "goroutines/conn") // after the loop: ResetTimer drops reported metrics
		})
	}
}

// goroutinesPerConn is how many goroutines the transport holds for each
// of 16 idle connections, the server's own taken out.
func goroutinesPerConn(b *testing.B, tr http.RoundTripper, srv *rawServer) float64 {
	const conns = 16
	served := srv.conns.Load()
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var resps []*http.Response
	for range conns {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, srv.url(), bytes.NewReader([]byte("x")))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			resps = append(resps, resp)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, r := range resps { // all open at once: sixteen connections
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	runtime.Gosched()
	added := float64(runtime.NumGoroutine()-before) - float64(srv.conns.Load()-served)
	if added < 0 {
		added = 0
	}
	return added / conns
}
