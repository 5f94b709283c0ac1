// Package traces receives the OpenTelemetry spans an inference server
// exports for each request and joins each to the client's sample of the
// same request, so the server's queue, prefill and decode times sit beside
// the client's TTFT.
//
// # Protocols
//
// A Receiver listens on one port for OTLP/HTTP and OTLP/gRPC together:
//
//   - POST /v1/traces with Content-Type application/x-protobuf (an
//     ExportTraceServiceRequest) or application/json (OTLP/JSON:
//     lowerCamelCase keys, trace and span ids as hex strings, int64 values
//     as strings or numbers); Content-Encoding gzip is accepted. The answer
//     is 200 with an ExportTraceServiceResponse in the request's encoding,
//     carrying partial_success (rejected_spans, error_message) when some
//     spans had an invalid trace or span id; 400 for an undecodable body,
//     413 over the body cap (after decompression), 415 for another content
//     type or encoding, each with a google.rpc.Status body.
//   - OTLP/gRPC (opentelemetry.proto.collector.trace.v1.TraceService/Export,
//     HTTP/2 without TLS, gzip accepted), vLLM's default exporter protocol.
//
// # Spans
//
// A span is a request span when it carries at least one of these
// attributes; any other span is counted Other and not delivered:
//
//	vLLM (vllm/tracing.py SpanAttributes, commit 03b8a674), span "llm_request":
//	  gen_ai.request.id                    the server's request id (string)
//	  gen_ai.latency.time_in_queue         Queue, seconds
//	  gen_ai.latency.time_to_first_token   TTFT, seconds
//	  gen_ai.latency.e2e                   E2E, seconds
//	  gen_ai.latency.time_in_model_prefill Prefill, seconds
//	  gen_ai.latency.time_in_model_decode  Decode, seconds
//	  gen_ai.usage.prompt_tokens           PromptTokens
//	  gen_ai.usage.completion_tokens       CompletionTokens
//	TGI (router/src/server.rs, commit 003eaec0), spans "generate" and "generate_stream":
//	  queue_time                           Queue, a Rust duration string ("1.2ms")
//	  total_time                           E2E, a Rust duration string
//
// Seconds may come as a double, an int or a numeric string. A value that
// is not a number, is negative, NaN or infinite (or a token count that is
// not whole) is malformed: that field stays engine.Absent (-1 for counts)
// and the span is still delivered, counted Malformed. SGLang's spans are
// per-thread slices named after the scheduler's stages, with no latency
// attribute of the request (sgl-project/sglang
// python/sglang/srt/tracing/trace.py at commit 021a8923): they count as
// Other.
//
// # Joining
//
// A Joiner matches a span to a sample by the W3C trace id the request
// carried in its traceparent (vLLM continues the incoming trace). A span
// whose trace id matches no request may still match by gen_ai.request.id
// equal to the sample's Result.RequestID, for a server that ignored or
// mangled traceparent; such joins are counted ByRequestID.
//
// A span may arrive before its sample (the server exports as soon as the
// request ends, the client's sample can be later): it waits, up to
// MaxPendingSpans spans, the oldest evicted past that (Evicted); spans
// still waiting at Flush are Unjoined. A span of a trace already joined
// or waiting (a span sent again, or a second request span of one trace) is
// a Duplicate and changes nothing; joined traces are remembered for the
// last RememberJoins joins. A sample waits
// up to Wait for its span, released by a timer, then goes on with
// Result.Span nil (NoSpan).
package traces
