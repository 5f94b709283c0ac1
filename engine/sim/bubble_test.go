package sim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// timedWriter is a streaming http.ResponseWriter that times content
// events as they are written, the way streamChat times them as they
// arrive. In a testing/synctest bubble its clock is the fake one, so a
// simulated delay comes out exact however busy the machine is.
type timedWriter struct {
	header  http.Header
	t0      time.Time
	pending bytes.Buffer
	res     streamResult
}

func (w *timedWriter) Header() http.Header { return w.header }
func (w *timedWriter) WriteHeader(int)     {}
func (w *timedWriter) Flush()              {}

func (w *timedWriter) Write(b []byte) (int, error) {
	w.pending.Write(b)
	for {
		line, err := w.pending.ReadString('\n')
		if err != nil { // an incomplete line waits for the rest
			w.pending.Reset()
			w.pending.WriteString(line)
			return len(b), nil
		}
		w.event(strings.TrimRight(line, "\r\n"))
	}
}

func (w *timedWriter) event(line string) {
	data, ok := strings.CutPrefix(line, "data: ")
	switch {
	case !ok:
	case data == "[DONE]":
		w.res.done = true
	case strings.Contains(data, `"content":"`) && !strings.Contains(data, `"content":""`): // not the role chunk
		w.res.last = time.Now()
		if w.res.contents == 0 {
			w.res.first, w.res.ttft = w.res.last, w.res.last.Sub(w.t0)
		}
		w.res.contents++
	}
}

// streamInProcess serves one streaming chat request on s in the calling
// goroutine, no network between, and times its content events.
func streamInProcess(s *Server, body string) streamResult {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	w := &timedWriter{header: http.Header{}, t0: time.Now()}
	s.ServeHTTP(w, r)
	return w.res
}

// streamsInProcess serves n copies of body on s at once.
func streamsInProcess(s *Server, body string, n int) []streamResult {
	res := make([]streamResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { res[i] = streamInProcess(s, body) })
	}
	wg.Wait()
	return res
}
