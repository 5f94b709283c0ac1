package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/nginxtest"
)

// proxyTo is an nginx location that proxies to upstream. A streaming one
// speaks HTTP/1.1 with keep-alive to it and passes each event on as it
// comes (proxy_buffering off), as a gateway in front of an LLM server
// must; a buffering one is nginx's defaults, the classic oversight: HTTP/1.0
// to the upstream and buffering on, ignoring the server's
// X-Accel-Buffering: no as gateways that buffer do.
func proxyTo(upstream string, buffering bool) string {
	if buffering {
		return fmt.Sprintf(`location / {
      proxy_pass %s;
      proxy_buffering on;
      proxy_ignore_headers X-Accel-Buffering;
    }`, upstream)
	}
	return fmt.Sprintf(`location / {
      proxy_pass %s;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 60s;
    }`, upstream)
}

// TestE2EGatewayStreamsThrough: through a real nginx that does not buffer
// (proxy_buffering off), TTFT and TPOT hold against the server's own log
// of the same requests; through one that buffers, the events arrive
// together and the result warns that a gateway is most likely buffering
// the stream.
func TestE2EGatewayStreamsThrough(t *testing.T) {
	dir := t.TempDir()
	truth := filepath.Join(dir, "truth.jsonl")
	mock := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "50ms", "--fixed-itl", "5ms", "--truth-log", truth)
	upstream := strings.TrimSuffix(mock.mockURL(t), "/v1")
	streamed, buffered := nginxtest.FreePort(t), nginxtest.FreePort(t)
	gw := nginxtest.Start(t, fmt.Sprintf(`
  server { listen 127.0.0.1:%d; %s }
  server { listen 127.0.0.1:%d; %s }`, streamed, proxyTo(upstream, false), buffered, proxyTo(upstream, true)),
		streamed, buffered)

	run := func(port int, out string, tokens ...string) string {
		t.Helper()
		maxTokens := "32"
		if len(tokens) > 0 {
			maxTokens = tokens[0]
		}
		_, stderr, code := runBinary(t, cleanEnv(), "run", "../../scenarios/scale_bench.lua",
			"--target", fmt.Sprintf("http://127.0.0.1:%d/v1", port),
			"--set", "vus=4", "--set", "requests=3", "--set", "max_tokens="+maxTokens, "--out", out, "-q")
		if code != 0 {
			t.Fatalf("run through the gateway on port %d exited %d:\n%s\nnginx: %s", port, code, stderr, gw.ErrorLog())
		}
		return out
	}

	through := loadResult(t, run(streamed, filepath.Join(dir, "streamed.json")))
	for _, w := range through.Warnings {
		if strings.Contains(w, "buffering") {
			t.Errorf("an unbuffered gateway was warned of buffering: %s", w)
		}
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	stdout, stderr, code := runBinary(t, nil, "report", filepath.Join(dir, "streamed.json"), "--truth", truth, "-q")
	if code != 0 {
		t.Fatalf("report --truth exited %d:\n%s", code, stderr)
	}
	// Every error column ("+0.123 ±0.064"), through the gateway: its own
	// hop is on loopback, well within the bound of the direct harness.
	errs := regexp.MustCompile(`([+-]\d+\.\d+) ±`).FindAllStringSubmatch(stdout, -1)
	if len(errs) == 0 {
		t.Fatalf("report --truth shows no errors:\n%s", stdout)
	}
	for _, m := range errs {
		if v, _ := strconv.ParseFloat(m[1], 64); v < -5 || v > 25 {
			t.Errorf("through the gateway, an error of %s ms against the server's own figures:\n%s", m[1], stdout)
		}
	}

	// The buffering gateway: the mock is gone, start another.
	mock2 := startBinary(t, "mock", "--addr", "127.0.0.1:0", "--fixed-ttft", "50ms", "--fixed-itl", "5ms")
	upstream2 := strings.TrimSuffix(mock2.mockURL(t), "/v1")
	buffering := nginxtest.FreePort(t)
	nginxtest.Start(t, fmt.Sprintf(`server { listen 127.0.0.1:%d; %s }`, buffering, proxyTo(upstream2, true)), buffering)
	res := loadResult(t, run(buffering, filepath.Join(dir, "buffered.json")))
	st := res.Stages[len(res.Stages)-1]
	if st.ITL.P50 >= 0.5 {
		t.Errorf("through a buffering gateway ITL p50 %.2f ms: want the events to arrive together", st.ITL.P50)
	}
	for _, tc := range []struct{ tokens, want string }{
		{"32", "arrived in bursts"}, // beyond nginx's first 4 KB buffer
		{"12", "TTFT ≈ E2E"},        // within it: the whole answer at once
	} {
		res := res
		if tc.tokens != "32" {
			res = loadResult(t, run(buffering, filepath.Join(dir, "buffered-"+tc.tokens+".json"), tc.tokens))
		}
		warned := false
		for _, w := range res.Warnings {
			warned = warned || strings.Contains(w, tc.want) && strings.Contains(w, "proxy_buffering off")
		}
		if !warned {
			t.Errorf("%s tokens through a buffering gateway: no warning saying %q; warnings: %q", tc.tokens, tc.want, res.Warnings)
		}
	}
}

// TestLlamaServerThroughGateway: llama.cpp's server behind a real nginx
// that does not buffer: per request, llmload's TPOT through the gateway
// is the server's own (its timings), and TTFT never less than the
// server's prompt processing.
func TestLlamaServerThroughGateway(t *testing.T) {
	base := llamaServer(t)
	port := nginxtest.FreePort(t)
	nginxtest.Start(t, fmt.Sprintf(`server { listen 127.0.0.1:%d; %s }`, port, proxyTo(base, false)), port)
	res, recs, _ := runLlama(t, fmt.Sprintf("http://127.0.0.1:%d", port), "api=chat", "stream=true")
	if res.Stages[0].OK != 16 {
		t.Fatalf("%d ok through the gateway, want 16", res.Stages[0].OK)
	}
	var abs []float64
	for _, rec := range recs {
		srvPrompt, ok := num(rec, "server_prompt_ms")
		ttft, _ := num(rec, "ttft_ms")
		if !ok || ttft < srvPrompt {
			t.Errorf("TTFT %.3f ms, server's prompt processing %.3f ms (timings %v): want TTFT ≥ it", ttft, srvPrompt, ok)
		}
		tpot, ok1 := num(rec, "tpot_ms")
		srvTPOT, ok2 := num(rec, "server_tpot_ms")
		if ok1 && ok2 {
			abs = append(abs, max(tpot-srvTPOT, srvTPOT-tpot))
		}
	}
	if len(abs) < 12 {
		t.Fatalf("only %d requests with both TPOTs", len(abs))
	}
	t.Logf("through nginx: median |TPOT − server TPOT| %.4f ms over %d requests", median(abs), len(abs))
	if m := median(abs); m > 0.1 {
		t.Errorf("through the gateway, median |TPOT − server TPOT| %.4f ms, want ≤ 0.1 ms", m)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "buffering") {
			t.Errorf("warned of buffering through proxy_buffering off: %s", w)
		}
	}
}
