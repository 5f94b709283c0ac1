// Package sim is llmload's built-in OpenAI-compatible inference server. It
// stands in for a real target when a scenario names none, and `llmload
// mock` serves it, so that a load test shows on a fresh machine what it
// shows against a continuous-batching server such as vLLM: a throughput
// knee once the batch is full and a latency cliff behind it.
//
// # Routes
//
// POST /v1/chat/completions and the legacy POST /v1/completions (a string
// prompt, simulated as one user message; streamed chunks carry "text" and
// no role chunk), streaming or not, POST /v1/audio/transcriptions and
// /v1/audio/speech (see Speech), GET /v1/models, GET /health and GET
// /metrics. Other paths get 404 and other methods 405, both with an
// OpenAI-style body: {"error":{"message":...,"type":"invalid_request_error",
// "code":404}}. With Config.APIKey set, /v1 routes without
// "Authorization: Bearer <key>" (or the key in an api-key or x-api-key
// header, as Azure OpenAI and gateways take it) get 401.
//
// Gateways' other APIs are served too, each reduced to the chat request it
// amounts to and generated alike. POST /v1/responses is OpenAI's Responses
// API: input (a string, or message, function_call and function_call_output
// items) after instructions; max_output_tokens; typed events from
// response.created to response.completed (response.incomplete when
// max_output_tokens cut the answer) with usage, and no [DONE]. POST
// /v1/messages is Anthropic's Messages API: it wants x-api-key rather than
// a bearer token and anthropic-version (400 without), max_tokens (400
// without), user and assistant roles (a system message is bad_role) and a
// separate system; it streams message_start, ping, content_block_start,
// content_block_delta, content_block_stop, message_delta and message_stop,
// and its errors take Anthropic's shape {"type":"error","error":{"type":
// ...,"message":...}}. POST /v1/embeddings embeds a string or a list of
// strings (none blank, at most MaxEmbeddingInputs, each within the
// context) into unit vectors of DefaultEmbeddingDims (or dimensions, up to
// MaxEmbeddingDims), float or base64, a deterministic function of the text
// and Config.Seed; its inputs take a batch slot and a prefill, and usage
// counts their tokens.
//
// # Images, audio and video
//
// A message's content may be a string or an array of parts in every API:
// chat's text, image_url (a base64 data URL or an http(s) URL),
// input_audio (base64 wav or mp3) and video_url; the Messages API's text
// and image blocks (a base64 or url source); the Responses API's
// input_text, input_image and input_audio. Text parts count as text. Each
// media item is decoded and probed (engine/media: an image's width and
// height, an audio file's seconds from its header, an mp4's seconds from
// its moov box) and adds prompt tokens, which usage's prompt_tokens (or
// input_tokens) report, which are prefilled as text tokens are (so TTFT
// grows with the images) and which count against the context window:
//
//   - an image by Config.ImageTokens (`llmload mock --image-tokens`):
//     qwen2vl, the default, is Qwen2-VL's smart resize — each side rounded
//     to a multiple of 28 px, the area kept within 56×56 and 28×28×1280
//     pixels, then (h/28)×(w/28) tokens (1225 for 1024×1024); patch14 is
//     ⌈w/14⌉×⌈h/14⌉ after the same area cap; llava is LLaVA-1.5's fixed 576;
//   - an http(s) image URL is never fetched: it counts as a square of
//     Config.URLImageSide (1024) pixels;
//   - audio is AudioTokensPerSecond (25) tokens a second;
//   - a video is sampled at VideoFPS (2) frames a second up to
//     VideoMaxFrames (32), each counted as a 448×448 image; a URL, or an
//     mp4 whose header does not say, lasts DefaultVideoSeconds (10).
//
// A media part a vision server refuses gets a 400 whose message names the
// part (messages[0].content[1]: image_url: ...) and says why: invalid
// base64; a data URL whose MIME type is not a known format (image/bmp) or
// disagrees with the bytes (a PNG labelled image/jpeg); bytes that are not
// an image (or audio, or video); a header that cannot be decoded, an image
// of zero pixels, a truncated JPEG, PNG or GIF, a WAV whose data chunk
// claims more than the file holds; an item beyond Config.MaxImageBytes
// decoded (--max-image-bytes, 20 MB); an input_audio format other than wav
// or mp3; a URL neither http(s) nor data; more images in a request than
// Config.MaxImages (--max-images, 16). An image's detail is accepted
// and ignored, as vLLM ignores it. A request without media parts
// costs what it did: parts are decoded a second time only when a message
// has a part other than text.
//
// # Speech
//
// POST /v1/audio/transcriptions takes a multipart form within
// MaxBodyBytes: file (required: 400 naming it; a whole audio file whose
// header says its length, else 400), model, language, prompt, stream and
// response_format (json, the default, or text; verbose_json, srt and vtt
// get 400). Its prompt is the audio's tokens (25 a second) and the
// prompt's, prefilled on the batch's lane; the transcript is seeded
// pseudo-words, about WordsPerSecond (2.5) a second of audio, decoded at
// the batch's pace. Whole, it answers {"text":...,"usage":{"type":"tokens",
// "input_tokens":...,"input_token_details":{"text_tokens":...,
// "audio_tokens":...},"output_tokens":...,"total_tokens":...}}; streamed,
// transcript.text.delta events and then transcript.text.done with the text
// and the usage, as OpenAI streams it.
//
// POST /v1/audio/speech takes JSON: input (required, not blank, at most
// MaxSpeechInput characters), model,
// voice, speed (0.25 to 4) and response_format, wav (the default) or pcm
// (mp3, opus, aac and flac get 400: the simulator encodes wav and pcm). The
// audio lasts words(input) / WordsPerSecond seconds (at least
// MinSpeechSeconds), divided by speed: 24 kHz 16-bit mono samples of a
// quiet tone. The first byte leaves once a batch slot is held and the
// input's tokens are prefilled (FixedTTFT in the fixed-delay mode): a WAV
// header whose sizes are the exact total (Content-Length is set), then the
// samples a tenth of a second at a time, each when the simulated model has
// made it, so that the last leaves seconds / Config.SpeechRTF
// (--speech-rtf, 20) after the first.
//
// # Tool calls
//
// A chat, Responses or Messages request with tools is answered with a
// call of one instead of text when its tool_choice requires one
// ("required", Anthropic's "any", or a named tool: that tool, else the
// first), or, with auto or no choice, when its last message is the user's,
// so an agent loop plays out as call, tool result, answer; never with
// "none". The call's arguments are {"<first parameter>": "<generated
// words>"} and stream as each API streams them: OpenAI's chat names the
// call (id, type, name) in its first delta and sends the arguments in
// pieces, finish_reason "tool_calls"; the Responses API as a function_call
// item and response.function_call_arguments.delta events; the Messages API
// as a tool_use block and input_json_delta events, stop_reason
// "tool_use".
//
// # Metrics
//
// GET /metrics (no key needed, as with vLLM) serves the Prometheus text
// format under vLLM's names, each labelled model_name="<model>", so a
// scraper built for vLLM reads the simulator alike:
// vllm:num_requests_running and vllm:num_requests_waiting (gauges from the
// scheduler: slots held, requests queued), vllm:kv_cache_usage_perc (the
// prefix cache's fill, 0..1), vllm:num_preemptions_total (always 0: the
// simulator never preempts), and the histograms
// vllm:time_to_first_token_seconds and vllm:e2e_request_latency_seconds
// with vLLM's buckets, observed for every request generated to its end and
// timed from its arrival (after the body is read and validated); and
// vllm:request_queue_time_seconds, vllm:request_prefill_time_seconds,
// vllm:request_decode_time_seconds and vllm:request_inference_time_seconds
// with vLLM's request-latency buckets (those of the e2e histogram), timed
// as the spans' attributes are (see Traces). With speculative decoding,
// also vLLM's counters (see Speculative decoding). Names, help texts and
// buckets are those of vllm/v1/metrics/loggers.py at commit 005a810b.
//
// # Request ids
//
// Every request on a generating route gets an id, numbered in arrival
// order ("chatcmpl-sim-7-1a2b3c4d": the API's prefix, the number, a hash
// of the content), answered as the response's id and in an X-Request-Id
// header — a rejected request's too, whose error body has no id — and
// logged as the truth log's id, so a client's record, the truth log and a
// span name the same request alike.
//
// # Traces
//
// With Config.OTLPTracesEndpoint (`llmload mock --otlp-traces-endpoint`;
// --otlp-traces-protocol http/protobuf, the default, or grpc; without the
// flag, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL as vLLM reads it, though vLLM's
// own default is grpc) every request on a generating route (chat,
// completions, responses, messages, embeddings, transcriptions; streamed
// or not; rejected too) ends one span, exported by the OpenTelemetry SDK's
// batch span processor, as vLLM's --otlp-traces-endpoint does. It follows
// vLLM's output_processor.py do_tracing (vllm/v1/engine/output_processor.py
// at commit d0782260; attribute names from vllm/tracing/utils.py at commit
// 0bf3270f; stats from vllm/v1/metrics/stats.py at commit 28ed1fb8): a
// SERVER span named llm_request from the request's arrival to the end of
// its answer, its resource's service.name "llmload-sim", continuing the
// caller's W3C traceparent (the span's trace is the caller's, its parent
// the caller's span; a missing or malformed traceparent starts a new
// trace, and an unsampled one gets no span, as the SDK's default sampler
// decides for vLLM). Its attributes, latencies in float seconds:
//
//   - gen_ai.request.id: the answer's id (X-Request-Id);
//   - gen_ai.response.model, gen_ai.request.max_tokens (the effective
//     limit), gen_ai.usage.prompt_tokens and gen_ai.usage.completion_tokens
//     (the tokens sent), gen_ai.response.finish_reasons (a JSON list,
//     ["stop"] or ["length"], vLLM's engine's words);
//   - gen_ai.latency.e2e: arrival to the end;
//   - gen_ai.latency.time_in_queue: asking for a batch slot to holding one
//     (vLLM's QUEUED to SCHEDULED events); it grows once MaxBatch requests
//     run;
//   - gen_ai.latency.time_in_model_prefill: holding the slot to the first
//     token (waiting for the prefill lane included, as vLLM counts a
//     preemption during prefill);
//   - gen_ai.latency.time_in_model_decode: the first token to the last;
//   - gen_ai.latency.time_in_model_inference: the slot to the last token;
//   - gen_ai.latency.time_to_first_token: arrival to the first token's
//     leaving for the client (vLLM's frontend stamp), which is the truth
//     log's TTFT. It exceeds queue + prefill by the time between arrival
//     and asking for a slot (reading and judging the body).
//
// A figure the request never reached is left out rather than sent as
// vLLM's zero (a rejected request has only its id, model and e2e). A
// request answered with an error status, cut before its end, or reset has
// status Error. The fixed-delay mode has no queue: queue is 0.
//
// Export never slows serving: spans wait in the processor's queue (2048)
// and beyond it are dropped; an export gives up after 5 s; Close flushes
// what is queued for at most 5 s more. Stats.Spans counts the spans ended,
// exported, failed to export and (after Close) dropped, and `llmload mock`
// prints them when it stops.
//
// # Speculative decoding
//
// With Config.SpecTokens K (`llmload mock --spec-tokens K --spec-accept
// P`) each decode step verifies a draft of K tokens, each accepted with
// probability Config.SpecAccept P in order until the first rejected, from a
// random stream seeded by Config.Seed and the request's content (so runs
// are reproducible), and emits 1 + accepted tokens as one streamed chunk
// for one decode step's time: a client sees k tokens per chunk, k − 1 of
// them accepted drafts. The prefill's token comes alone. A draft near the
// end of an answer is still K tokens, as vLLM's drafter does not know the
// end; only the tokens that fit are sent. /metrics then serves vLLM's
// counters (vllm/v1/spec_decode/metrics.py at commit 016a8587; the
// Prometheus client adds _total): vllm:spec_decode_num_drafts_total,
// vllm:spec_decode_num_draft_tokens_total,
// vllm:spec_decode_num_accepted_tokens_total and
// vllm:spec_decode_num_accepted_tokens_per_pos_total{position="0".."K-1"}.
// The acceptance rate accepted / draft tokens is therefore
// (P + P² + … + P^K) / K, position i's rate P^(i+1), and the mean
// acceptance length 1 + accepted / drafts. Stats.Spec holds the same
// counts.
//
// # Validation
//
// A request gets 400 for: malformed JSON or a body that is not an object;
// missing or empty messages; a role other than system, developer, user,
// assistant, tool or function; no user message with non-blank text (a
// request whose only user input is empty or whitespace; zero-width
// characters count as text; a media part counts as input); content parts
// of unknown types or media the simulator refuses (see above); negative
// max_tokens or max_completion_tokens; n other than 1; temperature outside
// [0, 2]; top_p outside [0, 1]; stream_options without stream; and prompt
// tokens + max_tokens beyond Config.MaxContext (a prompt found beyond it
// before it was counted whole is said to have "more than" MaxContext
// tokens). A model other than
// Config.Model gets 404 (an absent model is served). Bodies over
// Config.MaxBodyBytes (32 MB by default, so a 2 MB overlong prompt is read
// and gets the context-length 400, and a 20 MB image in base64 is judged
// by the image's own bound) get 413. Before decoding, a
// Content-Type other than application/json gets 415 (an absent one is
// accepted), and an empty or blank body, a body that is not UTF-8 or JSON
// nested deeper than MaxJSONDepth gets 400 — the depth by a linear scan,
// so a nesting bomb never reaches the decoder. max_tokens 0 counts as
// absent, because go-openai's request type cannot tell them apart. Other
// fields (stop, tools, logprobs...) are accepted and ignored.
//
// vLLM's ignore_eos (the answer runs to max_tokens, finish "length") and
// min_tokens (no early stop before it; 400 if above max_tokens) are
// decoded from the body in a second pass.
//
// # Dirty data and defects
//
// Every request is sorted into a dirty-data kind (DirtyKinds, the names
// engine/dirty uses): each rejection above is one (empty, whitespace,
// no_messages, overlong, bad_role, huge_max_tokens, negative_max_tokens,
// unknown_model, malformed_json, wrong_content_type, invalid_utf8,
// deep_nesting), and a valid request whose text holds zero-width
// characters or a BOM (invisible), bidirectional controls (bidi), C0
// controls other than tab and newlines or DEL (control_chars) or
// characters beyond the BMP (emoji_cjk) is served normally but still
// classified. Config.Defects (see ParseDefects) makes the server misbehave
// on chosen kinds, to test a client: answer with a given status, answer 200
// as if the request were valid, hang until the client gives up or Close,
// reset the connection before any response, or truncate: start a 200,
// send a few events (or half a whole answer), then cut the connection.
//
// # Tokens
//
// Prompt tokens are counted by CountTokens on each message's text, plus 4
// per message and 3 for the reply, as OpenAI's cookbook counts chat
// templates. With Config.Tokenizer (`llmload mock --tokenizer`; the
// built-in simulator of a run takes options.target.tokenizer) they are a
// real tokenizer's instead: each message's text encoded once per request,
// inside a ChatML template of the same 4 and 3 tokens (<|im_start|> role
// "\n" text <|im_end|>, and <|im_start|> assistant "\n"). That costs
// about a millisecond of CPU per 2,000 prompt tokens, twenty times the
// estimate (BenchmarkPromptTokens); a prompt far beyond the context window
// is rejected once a prefix of it is, without encoding the rest. Embedding
// inputs are counted alike, without a template. Each generated pseudo-word
// is one token; usage reports those counts.
//
// # Timing
//
// The server models continuous batching with Config.MaxBatch slots. A
// request waits first come, first served for a slot; then its prefill
// (PrefillBase + PrefillPerToken × prompt tokens not in the prefix cache)
// runs on a single prefill
// lane, queued behind other prefills, and ends with the first token. Each
// further token takes one decode step, DecodeBase + DecodePerSeq ×
// (running − 1), where running counts the slots in use at that step, and
// every prefill delays the running batch by PrefillInterference of its
// cost. Each request's own goroutine sleeps until absolute deadlines, so
// timings do not drift under load. A client that goes away frees its slot
// at once.
//
// # Prefix cache
//
// Like vLLM's automatic prefix caching, the prompt is cut into blocks of
// BlockTokens tokens, each keyed by the hash of the whole prompt up to its
// end (role markers included), so a block is reused only when everything
// before it matches. With a tokenizer a block is 16 token ids of the
// templated prompt and, as in vLLM, the prompt's last token is never
// served from the cache: two one-message prompts whose texts share their
// first k tokens share the floor((3+k)/16) blocks that the template's 3
// leading tokens and those k fill. At prefill the leading blocks already
// cached count as cached tokens and cost nothing; then all the prompt's
// blocks are cached, least recently used evicted beyond
// Config.PrefixCacheTokens (1,000,000 by default; negative disables). A
// shared system prompt or document thus lowers TTFT, and a unique
// "[req_N]" at the start defeats the cache. Cached tokens appear in each
// API's usage — chat and completions' prompt_tokens_details.cached_tokens
// (when there are any, as vLLM with --enable-prompt-tokens-details), the
// Responses API's input_tokens_details.cached_tokens, the Messages API's
// cache_read_input_tokens (in a stream, message_delta's usage:
// message_start leaves before the cache is looked up) — and in
// Stats.CachedTokens. The cache changes timing only, never an answer's
// text or length.
//
// # Truth log
//
// With Config.TruthLog (`llmload mock --truth-log FILE`) every request on
// a generating route is one JSON line, a TruthRecord: its arrival (the
// kernel's receive time of its headers), status, tokens sent, TTFT, TPOT
// and E2E as the server timed them, what it asked for (max_tokens, and
// vLLM's min_tokens and ignore_eos when sent) and its prompt and cached
// tokens as usage reported them, its body's bytes, and its images, audios,
// videos, audio seconds and the prompt tokens they added (media_tokens, a
// part of prompt_tokens), so a test can hold a client's tokens per image
// against them; with Config.TruthPrompts (--truth-log-prompts) also its
// prompt text. Transcriptions are logged alike (endpoint
// "transcriptions"); a speech answer's line (endpoint "speech") has its
// first byte's time (first_byte_ms, also ttft_ms), its audio_bytes and
// speech_seconds.
//
// # Determinism
//
// Output length, finish reason and text depend only on Config.Seed and the
// request's content (its messages' roles and text, its media items, the effective
// max_tokens, temperature, top_p and seed), never on arrival order or
// timing: the same request always gets the same answer, and a run with the
// same seed and the same prompts is reproducible however its requests
// interleave. Ids number requests in arrival order.
package sim
