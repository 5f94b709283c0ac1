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
// no role chunk), streaming or not, GET /v1/models and GET /health. Other paths get 404 and other methods 405, both with an
// OpenAI-style body: {"error":{"message":...,"type":"invalid_request_error",
// "code":404}}. With Config.APIKey set, /v1 routes without
// "Authorization: Bearer <key>" get 401.
//
// # Validation
//
// A request gets 400 for: malformed JSON or a body that is not an object;
// missing or empty messages; a role other than system, developer, user,
// assistant, tool or function; no user message with non-blank text (a
// request whose only user input is empty or whitespace; zero-width
// characters count as text); image or unknown content parts; negative
// max_tokens or max_completion_tokens; n other than 1; temperature outside
// [0, 2]; top_p outside [0, 1]; stream_options without stream; and prompt
// tokens + max_tokens beyond Config.MaxContext. A model other than
// Config.Model gets 404 (an absent model is served). Bodies over
// Config.MaxBodyBytes get 413. max_tokens 0 counts as absent, because
// go-openai's request type cannot tell them apart. Other fields (stop,
// tools, logprobs...) are accepted and ignored.
//
// # Tokens
//
// Prompt tokens are counted by CountTokens on each message's text, plus 4
// per message and 3 for the reply, as OpenAI's cookbook counts chat
// templates. Each generated pseudo-word is one token; usage reports those
// counts.
//
// # Timing
//
// The server models continuous batching with Config.MaxBatch slots. A
// request waits first come, first served for a slot; then its prefill
// (PrefillBase + PrefillPerToken × prompt tokens) runs on a single prefill
// lane, queued behind other prefills, and ends with the first token. Each
// further token takes one decode step, DecodeBase + DecodePerSeq ×
// (running − 1), where running counts the slots in use at that step, and
// every prefill delays the running batch by PrefillInterference of its
// cost. Each request's own goroutine sleeps until absolute deadlines, so
// timings do not drift under load. A client that goes away frees its slot
// at once.
//
// # Determinism
//
// Output length, finish reason and text depend only on Config.Seed and the
// request's content (its messages' roles and text, the effective
// max_tokens, temperature, top_p and seed), never on arrival order or
// timing: the same request always gets the same answer, and a run with the
// same seed and the same prompts is reproducible however its requests
// interleave. Response ids number responses in arrival order.
package sim
