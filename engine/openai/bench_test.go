package openai

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// cycleReader serves the same bytes forever, as a long stream would.
type cycleReader struct {
	data []byte
	off  int
}

func (c *cycleReader) Read(p []byte) (int, error) {
	n := copy(p, c.data[c.off:])
	c.off = (c.off + n) % len(c.data)
	return n, nil
}

// benchChunks is 1,000 content chunks in vLLM's exact shape.
func benchChunks() []byte {
	var b strings.Builder
	for range 1000 {
		b.WriteString(`data: {"id":"chatcmpl-8d3f0c6a2b1e4f5a9c7d","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	return []byte(b.String())
}

// BenchmarkEventReader measures SSE framing alone; one op is one chunk.
func BenchmarkEventReader(b *testing.B) {
	data := benchChunks()
	r := newEventReader(&cycleReader{data: data})
	b.SetBytes(int64(len(data) / 1000))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChunkedFraming measures HTTP/1.1's chunked framing alone, as
// net/http reads a streamed body: one SSE event per chunk, each read
// whole through a 2 KB buffer. One op is one chunk.
func BenchmarkChunkedFraming(b *testing.B) {
	events := benchChunks()
	event := events[:bytes.Index(events, []byte("\n\n"))+2]
	var framed []byte
	for range 1000 {
		framed = fmt.Appendf(framed, "%x\r\n%s\r\n", len(event), event)
	}
	r := httputil.NewChunkedReader(bufio.NewReaderSize(&cycleReader{data: framed}, 2048))
	buf := make([]byte, len(event))
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamChunk measures everything the client does per streamed
// chunk: framing, stamping, decoding and recording; with continuous usage
// every chunk also carries a usage object. One op is one chunk.
func BenchmarkStreamChunk(b *testing.B) {
	for name, data := range map[string][]byte{"vllm": benchChunks(), "continuous usage": continuousChunks()} {
		b.Run(name, func(b *testing.B) {
			d := getDecoder(&cycleReader{data: data})
			res := &engine.Result{Start: time.Now()}
			w := startWatchdog(res.Start, timeouts{time.Hour, time.Hour, time.Hour}, func(error) {})
			defer w.stop()
			s := stream{res: res, w: w, dialect: chatDialect{}, chunk: &d.chunk, dec: &d.cd, itlHint: 1000}
			b.SetBytes(int64(len(data) / 1000))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if n++; n%1000 == 0 { // one request's worth: keep Text and ITL realistic
					*res = engine.Result{Start: res.Start}
					s = stream{res: res, w: w, dialect: chatDialect{}, chunk: &d.chunk, dec: &d.cd, itlHint: 1000}
				}
				ev, err := d.er.next()
				if err != nil {
					b.Fatal(err)
				}
				if e := s.handle(ev); e != nil {
					b.Fatal(e)
				}
			}
		})
	}
}

// continuousChunks is 1,000 one-token chunks with vLLM's continuous usage.
func continuousChunks() []byte {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-8d3f0c6a2b1e4f5a9c7d","object":"chat.completion.chunk","created":1718000000,"model":"Qwen/Qwen2.5-7B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":25,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", 26+i, 1+i)
	}
	return []byte(b.String())
}

func BenchmarkBuildBody(b *testing.B) {
	temp, seed := 0.7, int64(42)
	req := &engine.ChatRequest{Model: "Qwen/Qwen2.5-7B-Instruct", MaxTokens: 200, Temperature: &temp, Seed: &seed,
		Messages: []engine.Message{{Role: "user", Content: "[req_1] " + strings.Repeat("什么是机器学习？", 20)}}}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildBody(req, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("extra", func(b *testing.B) {
		r := *req
		r.Extra = map[string]any{"ignore_eos": true, "top_k": 20}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildBody(&r, false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkChat measures whole requests of 100 tokens against a loopback
// server, over a kept-alive connection, with and without the offline
// tokenizer, and with a gateway's headers: three of the target's, a query
// parameter and one header of the request's own. The server's own cost
// is included.
func BenchmarkChat(b *testing.B) {
	tokens := make([]string, 100)
	for i := range tokens {
		tokens[i] = " tok"
	}
	body := strings.Join(okStream(tokens...), "")
	gateway := func(c *Config) {
		c.Headers = []plan.Header{{Name: "X-Gateway-Token", Value: "gw-0123456789"}, {Name: "X-Tenant", Value: "t1"},
			{Name: "OpenAI-Organization", Value: "org-1"}}
		c.Query = []plan.Header{{Name: "api-version", Value: "2024-10-21"}}
	}
	for _, tc := range []struct {
		name, tok string
		edit      func(*Config)
		headers   []engine.Header
	}{
		{plan.DefaultTokenizer, plan.DefaultTokenizer, func(*Config) {}, nil},
		{TokenizerNone, TokenizerNone, func(*Config) {}, nil},
		{"none+headers", TokenizerNone, gateway, []engine.Header{{Name: "X-User", Value: "u-42"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := serve(b, script{steps: []step{{write: body}}})
			c := testClient(b, srv.URL+"/v1", func(c *Config) { c.Tokenizer = tc.tok; tc.edit(c) })
			req := chatReq()
			req.Headers = tc.headers
			b.ReportAllocs()
			for b.Loop() {
				if r := c.Chat(context.Background(), req); r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		})
	}
}

// BenchmarkNewRequest measures building one request's HTTP request, the
// client's per-request cost of headers: plain, and with a gateway's
// three target headers, a query parameter and a request's own header.
func BenchmarkNewRequest(b *testing.B) {
	pl := single([]byte(`{"model":"m"}`))
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		headers []engine.Header
	}{
		{"plain", func(*Config) {}, nil},
		{"headers", func(c *Config) {
			c.Headers = []plan.Header{{Name: "X-Gateway-Token", Value: "gw-0123456789"}, {Name: "X-Tenant", Value: "t1"},
				{Name: "OpenAI-Organization", Value: "org-1"}}
			c.Query = []plan.Header{{Name: "api-version", Value: "2024-10-21"}}
		}, []engine.Header{{Name: "X-User", Value: "u-42"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := testClient(b, "http://127.0.0.1:9/v1", func(c *Config) { c.APIKey, c.Tokenizer = "sk-k", TokenizerNone; tc.edit(c) })
			req := chatReq()
			req.Headers = tc.headers
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.newRequest(context.Background(), chatDialect{}, req, &pl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
