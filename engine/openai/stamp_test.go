package openai

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/h1"
)

// TestT0AfterConnect: t0 is when the request reached its connection, so a
// slow dial shows in Connect, never in TTFB or TTFT; a reused connection
// costs next to nothing.
func TestT0AfterConnect(t *testing.T) {
	const dialDelay = 300 * time.Millisecond
	body := strings.Join(okStream("a", "b"), "")
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	c := testClient(t, srv.URL+"/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
	tr := c.transport.(*h1.Transport)
	dial := tr.Dial
	tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dialDelay)
		return dial(ctx, network, addr)
	}
	issued := time.Now()
	first := c.Chat(context.Background(), chatReq())
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	if first.Connect < dialDelay || first.Start.Sub(issued) < dialDelay {
		t.Errorf("Connect %v, t0 %v after issue; want both ≥ the %v dial", first.Connect, first.Start.Sub(issued), dialDelay)
	}
	if first.TTFB >= first.Connect || first.TTFT >= first.Connect {
		t.Errorf("TTFB %v, TTFT %v: the %v spent connecting is in them", first.TTFB, first.TTFT, first.Connect)
	}
	second := c.Chat(context.Background(), chatReq())
	if second.Err != nil {
		t.Fatal(second.Err)
	}
	if second.Connect >= dialDelay {
		t.Errorf("reused connection: Connect %v, want far below the %v dial", second.Connect, dialDelay)
	}
}

// TestT0WithoutConnection: a request that never reached a connection is
// timed from when it was issued.
func TestT0WithoutConnection(t *testing.T) {
	c := testClient(t, "http://127.0.0.1:1/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
	before := time.Now()
	r := c.Chat(context.Background(), chatReq())
	if r.Err == nil || r.Start.Before(before) || r.Start.After(time.Now()) || r.Connect != 0 {
		t.Errorf("refused: err %v, start %v (issued after %v), connect %v", r.Err, r.Start, before, r.Connect)
	}
}
