package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// zeroCost makes every simulated duration zero, for tests of shape, not time.
func zeroCost(c Config) Config {
	c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = -1, -1, -1, -1
	c.PrefillInterference = -1
	return c
}

// chatBody is a request body with one user message and extra fields.
func chatBody(t *testing.T, content string, extra map[string]any) string {
	t.Helper()
	req := map[string]any{"messages": []map[string]any{{"role": "user", "content": content}}}
	for k, v := range extra {
		req[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serve sends one request to s in-process.
func serve(s *Server, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// checkErrorBody checks the OpenAI error shape and returns the error object.
func checkErrorBody(t *testing.T, status int, body []byte) map[string]any {
	t.Helper()
	var got map[string]map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	e := got["error"]
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("error message is empty in %s", body)
	}
	if code, _ := e["code"].(float64); int(code) != status {
		t.Errorf("error code = %v, want %d", e["code"], status)
	}
	if typ, _ := e["type"].(string); typ == "" {
		t.Errorf("error type is empty in %s", body)
	}
	for k := range e {
		switch k {
		case "message", "type", "param", "code":
		default:
			t.Errorf("unexpected error field %q in %s", k, body)
		}
	}
	return e
}

// startServer starts s on loopback and closes it when the test ends.
func startServer(t *testing.T, s *Server) string {
	t.Helper()
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return url
}

// streamResult is what a client saw of one streamed completion.
type streamResult struct {
	ttft        time.Duration
	first, last time.Time // arrival of the first and last content events
	contents    int
	done        bool
}

// tpot is the mean time per output token after the first.
func (r streamResult) tpot() time.Duration {
	if r.contents < 2 {
		return 0
	}
	return r.last.Sub(r.first) / time.Duration(r.contents-1)
}

// streamChat sends a streaming request and times its content events.
func streamChat(ctx context.Context, client *http.Client, url, body string) (streamResult, error) {
	var res streamResult
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return res, errors.New(resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		switch {
		case !ok:
		case data == "[DONE]":
			res.done = true
		case strings.Contains(data, `"content":"`):
			res.last = time.Now()
			if res.contents == 0 {
				res.first, res.ttft = res.last, res.last.Sub(t0)
			}
			res.contents++
		}
	}
	return res, sc.Err()
}

func TestRoutes(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	tests := []struct {
		method, path string
		want         int
		allow        string
	}{
		{"GET", "/health", 200, ""},
		{"HEAD", "/health", 200, ""},
		{"GET", "/v1/models", 200, ""},
		{"GET", "/v1/completions", 405, "POST"},
		{"GET", "/v1/embeddings", 405, "POST"},
		{"GET", "/v1/responses", 405, "POST"},
		{"GET", "/v1/images/generations", 404, ""},
		{"GET", "/", 404, ""},
		{"POST", "/v1/chat/completions/", 404, ""},
		{"GET", "/v1/chat/completions", 405, "POST"},
		{"DELETE", "/v1/models", 405, "GET, HEAD"},
		{"POST", "/health", 405, "GET, HEAD"},
	}
	for _, tt := range tests {
		w := serve(s, tt.method, tt.path, "", nil)
		if got, want := w.Code, tt.want; got != want {
			t.Errorf("%s %s: status = %d, want %d", tt.method, tt.path, got, want)
		}
		if got, want := w.Header().Get("Allow"), tt.allow; got != want {
			t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, want)
		}
		if tt.want >= 400 {
			checkErrorBody(t, tt.want, w.Body.Bytes())
		}
	}
}

func TestModels(t *testing.T) {
	s := New(Config{Model: "tiny-sim"})
	defer s.Close()
	w := serve(s, "GET", "/v1/models", "", nil)
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got, want := got.Object, "list"; got != want {
		t.Errorf("object = %q, want %q", got, want)
	}
	if got, want := len(got.Data), 1; got != want {
		t.Fatalf("models = %d, want %d", got, want)
	}
	if got, want := got.Data[0].ID, "tiny-sim"; got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
}

func TestAPIKey(t *testing.T) {
	const key = "sk-secret-key-123"
	s := New(zeroCost(Config{APIKey: key}))
	defer s.Close()
	body := chatBody(t, "hi", map[string]any{"max_tokens": 3})
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		{"no header", "POST", "/v1/chat/completions", "", 401},
		{"wrong key", "POST", "/v1/chat/completions", "Bearer sk-wrong", 401},
		{"no scheme", "POST", "/v1/chat/completions", key, 401},
		{"key prefix", "POST", "/v1/chat/completions", "Bearer " + key[:5], 401},
		{"right key", "POST", "/v1/chat/completions", "Bearer " + key, 200},
		{"lower-case scheme", "POST", "/v1/chat/completions", "bearer " + key, 200},
		{"models need it", "GET", "/v1/models", "", 401},
		{"models with it", "GET", "/v1/models", "Bearer " + key, 200},
		{"health is open", "GET", "/health", "", 200},
		{"azure api-key", "POST", "/v1/chat/completions", "api-key: " + key, 200},
		{"gateway x-api-key", "POST", "/v1/chat/completions", "x-api-key: " + key, 200},
		{"wrong api-key", "POST", "/v1/chat/completions", "api-key: sk-wrong", 401},
		{"api-key with a scheme", "POST", "/v1/chat/completions", "api-key: Bearer " + key, 401},
		{"models with api-key", "GET", "/v1/models", "api-key: " + key, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := map[string]string{"Authorization": tt.auth}
			if name, value, ok := strings.Cut(tt.auth, ": "); ok {
				header = map[string]string{name: value}
			}
			w := serve(s, tt.method, tt.path, body, header)
			if got, want := w.Code, tt.want; got != want {
				t.Fatalf("status = %d, want %d", got, want)
			}
			if strings.Contains(w.Body.String(), key) {
				t.Errorf("response leaks the API key: %s", w.Body)
			}
			if tt.want == 401 {
				checkErrorBody(t, 401, w.Body.Bytes())
			}
		})
	}
	if got, want := s.Stats().Rejected, int64(6); got != want {
		t.Errorf("rejected = %d, want %d", got, want)
	}
}

func TestStartServesOnLoopback(t *testing.T) {
	s := New(zeroCost(Config{}))
	url := startServer(t, s)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("url = %q, want http://127.0.0.1:PORT/v1", url)
	}
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, 200; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded, want an error")
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}, "http://127.0.0.1:8000/v1"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8000}, "http://127.0.0.1:8000/v1"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9}, "http://127.0.0.1:9/v1"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9}, "http://[::1]:9/v1"},
	}
	for _, tt := range tests {
		if got, want := baseURL(tt.addr), tt.want; got != want {
			t.Errorf("baseURL(%v) = %q, want %q", tt.addr, got, want)
		}
	}
}

func TestCloseEndsStreams(t *testing.T) {
	s := New(Config{DecodeBase: 10 * time.Millisecond, PrefillBase: -1})
	url := startServer(t, s)
	body := chatBody(t, "tell me a long story", map[string]any{"stream": true, "max_tokens": 5000})
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for { // wait for generation to start
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"`) {
			break
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); rest <- string(b) }()
	select {
	case tail := <-rest:
		if strings.Contains(tail, "[DONE]") {
			t.Error("a stream cut by Close ended with [DONE]")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open 5s after Close")
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	st := s.Stats()
	if got, want := st.Canceled, int64(1); got != want {
		t.Errorf("canceled = %d, want %d", got, want)
	}
	if got, want := st.Running, 0; got != want {
		t.Errorf("running = %d, want %d", got, want)
	}
	if _, err := s.Start("127.0.0.1:0"); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if got, want := serve(s, "GET", "/health", "", nil).Code, 503; got != want {
		t.Errorf("status after Close = %d, want %d", got, want)
	}
}

func TestCloseAnswersWaitingRequests(t *testing.T) {
	s := New(Config{MaxBatch: 1, DecodeBase: 10 * time.Millisecond})
	body := chatBody(t, "wait for me", map[string]any{"max_tokens": 5000})
	codes := make(chan int, 2)
	for range 2 { // one running, one queued
		go func() { codes <- serve(s, "POST", "/v1/chat/completions", body, nil).Code }()
	}
	waitFor(t, func() bool { st := s.Stats(); return st.Running == 1 && st.Waiting == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, want := <-codes, 503; got != want {
			t.Errorf("status of a request cut by Close = %d, want %d", got, want)
		}
	}
}

func TestTextCompletions(t *testing.T) {
	s := New(zeroCost(Config{Seed: 3}))
	defer s.Close()
	post := func(body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/completions", strings.NewReader(body)))
		return rec
	}
	tests := []struct {
		body   string
		status int
		want   string
	}{
		{`{"prompt":"Once upon a time","max_tokens":5}`, 200, `"object":"text_completion"`},
		{`{"prompt":"hi","max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`, 200, "data: [DONE]"},
		{`{"max_tokens":3}`, 400, "prompt is required"},
		{`{"prompt":["a","b"]}`, 400, "prompt must be a string"},
		{`{"prompt":"  "}`, 400, "must not be empty"},
		{`{"prompt":"hi","model":"other"}`, 404, "does not exist"},
		{`{"prompt":`, 400, "invalid JSON"},
	}
	for _, tt := range tests {
		rec := post(tt.body)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s, want %d containing %q", tt.body, rec.Code, rec.Body.String(), tt.status, tt.want)
		}
	}
	stream := post(`{"prompt":"hi","max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`).Body.String()
	if strings.Contains(stream, `"role"`) || !strings.Contains(stream, `"text":"`) || !strings.Contains(stream, `"completion_tokens":4`) {
		t.Errorf("text stream shape:\n%s", stream)
	}
}
