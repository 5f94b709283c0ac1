package traces

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"
)

// vllmSpan is request i's span with vLLM's full set of attributes.
func vllmSpan(i int) *tracepb.Span {
	tid := make([]byte, 16)
	copy(tid, fmt.Sprintf("%016d", i))
	return &tracepb.Span{
		TraceId: tid, SpanId: []byte(fmt.Sprintf("%08d", i%1e8)), Name: "llm_request",
		StartTimeUnixNano: 1, EndTimeUnixNano: 2, Kind: tracepb.Span_SPAN_KIND_SERVER,
		Attributes: []*commonpb.KeyValue{
			kv("gen_ai.response.model", str("Qwen/Qwen2.5-7B-Instruct")), kv("gen_ai.request.max_tokens", num(200)),
			kv("gen_ai.request.temperature", dbl(0.7)), kv("gen_ai.request.top_p", dbl(1)), kv("gen_ai.request.n", num(1)),
			kv(attrRequestID, str(fmt.Sprintf("chatcmpl-%d", i))), kv(attrPromptTokens, num(120)), kv(attrCompletionTokens, num(200)),
			kv(attrQueue, dbl(0.01)), kv(attrTTFT, dbl(0.2)), kv(attrE2E, dbl(3.1)),
			kv(attrPrefill, dbl(0.15)), kv(attrDecode, dbl(2.9)), kv("gen_ai.latency.time_in_model_inference", dbl(3.05)),
		},
	}
}

// BenchmarkReceive posts batches of 512 spans (the OTel SDKs' batch
// span processor's default) as OTLP/HTTP protobuf to a receiver; the
// client's CPU is in the figure too. The join is BenchmarkJoin's: the
// spans here are only counted.
func BenchmarkReceive(b *testing.B) {
	const batchSize = 512
	spans := make([]*tracepb.Span, batchSize)
	for i := range spans {
		spans[i] = vllmSpan(i)
	}
	body := exportProto(&testing.T{}, spans...)
	var delivered atomic.Int64
	r, err := Listen("127.0.0.1:0", Options{Deliver: func(Span) { delivered.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	url := "http://" + r.Addr().String() + TracesPath
	client := &http.Client{}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	cpu := cpuTime()
	for b.Loop() {
		resp, err := client.Post(url, ctProtobuf, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
	if got := delivered.Load(); got != int64(b.N*batchSize) {
		b.Fatalf("delivered %d spans, want %d", got, b.N*batchSize)
	}
}

// BenchmarkJoin is the join as a run meets it: an exporter's batch of
// 512 spans, half of whose samples came before it and half after. The
// trace ids outnumber what a Joiner remembers, so it reaches its steady
// state, where it forgets joins as it makes them.
func BenchmarkJoin(b *testing.B) {
	const batchSize = 512
	traces, requests, traceIDs := make([]string, joinIDs), make([]string, joinIDs), make([]TraceID, joinIDs)
	for i := range joinIDs {
		traces[i], requests[i], traceIDs[i] = traceHex(i), fmt.Sprintf("r%d", i), traceIDOf(i)
	}
	spans := make([]Span, batchSize)
	for i := range spans {
		spans[i] = spanOf(0, i, "", time.Millisecond)
	}
	joined := 0
	j := NewJoiner(JoinOptions{Wait: time.Hour}, func(s engine.Sample) {
		if s.Span != nil {
			joined++
		}
	})
	samples := func(from, to int) { giveSamples(j, traces, requests, from, to) }
	b.ReportAllocs()
	cpu := cpuTime()
	base := 0
	for b.Loop() {
		for i := range spans {
			k := (base + i) % joinIDs
			spans[i].TraceID, spans[i].Server.RequestID = traceIDs[k], requests[k]
		}
		samples(base, base+batchSize)
		for _, sp := range spans {
			j.Span(sp)
		}
		samples(base+1, base+batchSize)
		base += batchSize
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
	if joined != b.N*batchSize {
		b.Fatalf("joined %d, want %d", joined, b.N*batchSize)
	}
}

// cpuTime is the process's CPU time, user and system, in nanoseconds: on
// a machine shared with other work, wall time per op says little.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkReceiveGRPC is BenchmarkReceive over OTLP/gRPC, vLLM's default.
func BenchmarkReceiveGRPC(b *testing.B) {
	const batchSize = 512
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{}}}}}
	for i := range batchSize {
		req.ResourceSpans[0].ScopeSpans[0].Spans = append(req.ResourceSpans[0].ScopeSpans[0].Spans, vllmSpan(i))
	}
	r, err := Listen("127.0.0.1:0", Options{Deliver: func(Span) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	// The body is marshalled once, so that the figure is the receiver's
	// more than the client's.
	body, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := grpc.NewClient(r.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{proto: encoding.GetCodecV2("proto")})))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var out coltracepb.ExportTraceServiceResponse
		if err := conn.Invoke(context.Background(), "/opentelemetry.proto.collector.trace.v1.TraceService/Export", body, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
}

// BenchmarkDecode is the wire reader alone on a batch of 512 vLLM spans.
func BenchmarkDecode(b *testing.B) {
	const batchSize = 512
	spans := make([]*tracepb.Span, batchSize)
	for i := range spans {
		spans[i] = vllmSpan(i)
	}
	body := exportProto(&testing.T{}, spans...)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		var bt batch
		if err := decodeWire(body, &bt); err != nil || len(bt.spans) != batchSize {
			b.Fatal(err, len(bt.spans))
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
}

// exporterEnv names the receiver a TestExporterProcess posts to.
const exporterEnv = "LLMLOAD_TRACES_BENCH_EXPORTER"

// The ids of BenchmarkReceiveJoin's spans cycle through joinIDs, more
// than a Joiner remembers (two generations of DefaultRememberJoins), so
// it runs in its steady state.
const joinIDs = 1 << 17

// TestExporterProcess is BenchmarkReceiveJoin's exporter, in a process of
// its own so that the benchmark's CPU is the receiver's alone: for each
// batch number read from stdin it posts that batch of 512 vLLM spans and
// answers with a line. It does nothing unless the benchmark started it.
func TestExporterProcess(t *testing.T) {
	url := os.Getenv(exporterEnv)
	if url == "" {
		t.Skip("BenchmarkReceiveJoin's exporter")
	}
	in := bufio.NewScanner(os.Stdin)
	spans := make([]*tracepb.Span, 512)
	for in.Scan() {
		k, err := strconv.Atoi(in.Text())
		if err != nil {
			t.Fatal(err)
		}
		for i := range spans {
			spans[i] = vllmSpan((k*len(spans) + i) % joinIDs)
		}
		resp, err := http.Post(url, ctProtobuf, bytes.NewReader(exportProto(t, spans...)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
}

// BenchmarkReceiveJoin is what a run pays per span: batches of 512 vLLM
// spans posted as OTLP/HTTP protobuf by an exporter in another process
// (TestExporterProcess), read and decoded ("receive"), and joined to
// their requests' samples, half of which came before their span and half
// after ("receive+join"). Its cpu-ns/span is this process's CPU alone:
// the receiver's HTTP serving, the decoding and the join.
func BenchmarkReceiveJoin(b *testing.B) {
	b.Run("receive", func(b *testing.B) { benchReceiveJoin(b, false) })
	b.Run("receive+join", func(b *testing.B) { benchReceiveJoin(b, true) })
}

func benchReceiveJoin(b *testing.B, join bool) {
	const batchSize = 512
	var delivered atomic.Int64
	deliver := func(Span) { delivered.Add(1) }
	j := NewJoiner(JoinOptions{Wait: time.Hour}, func(s engine.Sample) {
		if s.Span != nil {
			delivered.Add(1)
		}
	})
	if join {
		deliver = j.Span
	}
	r, err := Listen("127.0.0.1:0", Options{Deliver: deliver})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExporterProcess$")
	cmd.Env = append(os.Environ(), exporterEnv+"=http://"+r.Addr().String()+TracesPath)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	answers := bufio.NewScanner(stdout)
	// The samples' ids, as the client records them: vllmSpan's.
	var ids, reqs []string
	if join {
		ids, reqs = make([]string, joinIDs), make([]string, joinIDs)
		for i := range ids {
			ids[i], reqs[i] = hex.EncodeToString(fmt.Appendf(nil, "%016d", i)), fmt.Sprintf("chatcmpl-%d", i)
		}
	}
	samples := func(from, to int) {
		if join {
			giveSamples(j, ids, reqs, from, to)
		}
	}
	b.ReportAllocs()
	cpu := cpuTime()
	k := 0
	for b.Loop() {
		base := k * batchSize
		samples(base, base+batchSize)
		fmt.Fprintln(stdin, k)
		if !answers.Scan() || answers.Text() != "200" {
			b.Fatalf("exporter: %q %v", answers.Text(), answers.Err())
		}
		samples(base+1, base+batchSize)
		k++
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*batchSize), "cpu-ns/span")
	if got := delivered.Load(); got != int64(b.N*batchSize) {
		b.Fatalf("%d spans delivered or joined, want %d", got, b.N*batchSize)
	}
}

// giveSamples gives j the samples of every other request from from to to,
// as the client records them; the ids cycle through traces and requests.
func giveSamples(j *Joiner, traces, requests []string, from, to int) {
	for i := from; i < to; i += 2 {
		k := i % len(traces)
		j.Sample(engine.Sample{Result: engine.Result{TraceID: traces[k], RequestID: requests[k]}})
	}
}
