package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// systemFingerprint marks every response as simulated.
const systemFingerprint = "fp_llmload_sim"

// serveChat answers POST /v1/chat/completions.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, parseCompletion, apiChat)
}

// serveTextCompletion answers POST /v1/completions.
func (s *Server) serveTextCompletion(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, parseTextCompletion, apiText)
}

// parser decodes and validates a request body.
type parser func(*Config, []byte) (*completion, *apiError)

// serve reads a request of api with parse and answers it carefully — an
// error or the completion — unless Config.Defects picks a misbehaviour for
// its kind.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, parse parser, api apiKind) {
	x, w := s.begin(w, r, "")
	// Deferred, so a handler ended by a reset's panic is logged too.
	defer s.end(r, x)
	in := s.read(w, r, parse, api)
	in.arrived, in.truth = x.arrived, x.truth
	in.id = s.newID(api, in.key())
	x.id, x.in = in.id, in
	w.Header().Set(RequestIDHeader, in.id)
	if rec := x.truth; rec != nil {
		rec.BodyBytes, rec.ID = int64(len(in.body)), in.id
	}
	if in.c != nil {
		x.truth.asked(&in.c.asked)
	}
	if behaviour, ok := s.cfg.Defects[in.kind()]; ok {
		s.misbehave(w, r, in, behaviour)
		return
	}
	if in.aerr != nil {
		s.rejected.Add(1)
		in.aerr.writeFor(w, api)
		return
	}
	s.answer(w, r, in.completion(&s.cfg))
}

// RequestIDHeader carries each answer's id, as vLLM sends it with
// --enable-request-id-headers.
const RequestIDHeader = "X-Request-Id"

// newID numbers a request's id in arrival order; key, the hash of its
// content, tells apart the runs of different servers.
func (s *Server) newID(api apiKind, key uint64) string {
	return fmt.Sprintf("%s-sim-%d-%08x", api.idPrefix(), s.seq.Add(1), uint32(key))
}

// exchange is one request on a generating route, from its arrival to the
// end of its handler: what its truth-log line and its span are made of.
type exchange struct {
	id      string
	arrived time.Time
	sr      *statusRecorder
	truth   *TruthRecord // nil without a truth log
	in      *incoming    // nil until read
	c       *completion  // set instead of in by routes without one
}

// begin counts a request on endpoint ("" for the generating APIs) and
// starts its exchange; the caller writes through the writer returned,
// which remembers the status.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, endpoint string) (*exchange, http.ResponseWriter) {
	s.requests.Add(1)
	x := &exchange{arrived: arrival(r), sr: &statusRecorder{ResponseWriter: w}}
	if s.truth != nil {
		x.truth = &TruthRecord{Arrival: x.arrived, Endpoint: endpoint}
	}
	return x, x.sr
}

// end writes the exchange's truth-log line and ends its span.
func (s *Server) end(r *http.Request, x *exchange) {
	now := time.Now()
	if x.truth != nil {
		x.truth.finish(x.sr.status)
		s.truth.write(x.truth)
	}
	c := x.c
	if x.in != nil {
		c = x.in.c
	}
	s.spans.record(r.Header, &spanFacts{id: x.id, model: s.cfg.Model, status: x.sr.status, c: c, arrived: x.arrived, end: now})
}

// answer generates c, streamed or whole, in its API's shape.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, c *completion) {
	arrived := time.Now()
	ctx, cancel := s.requestContext(r.Context())
	defer cancel()
	if c.id == "" {
		c.id = s.newID(c.api, c.key)
	}
	err := s.write(ctx, w, c, c.id)
	c.complete = err == nil
	if c.truth != nil {
		c.truth.ID, c.truth.Complete = c.id, err == nil
		c.truth.PromptTokens, c.truth.CachedTokens = c.promptTokens, c.cachedTokens
	}
	if err != nil {
		s.canceled.Add(1)
		return
	}
	s.completed.Add(1)
	s.metrics.completed(c.firstToken.Sub(arrived), time.Since(arrived))
	s.metrics.phases(c)
}

// write generates c and writes the answer of its API, streamed or whole.
func (s *Server) write(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	switch {
	case c.api == apiEmbeddings:
		return s.answerEmbeddings(ctx, w, c, id)
	case c.api == apiTranscription && c.stream:
		return s.streamTranscript(ctx, w, c, id)
	case c.api == apiTranscription:
		return s.answerTranscript(ctx, w, c, id)
	case c.api == apiResponses && c.stream:
		return s.streamResponse(ctx, w, c, id)
	case c.api == apiResponses:
		return s.answerResponse(ctx, w, c, id)
	case c.api == apiMessages && c.stream:
		return s.streamMessage(ctx, w, c, id)
	case c.api == apiMessages:
		return s.answerMessage(ctx, w, c, id)
	case c.stream && c.api == apiText:
		return s.streamText(ctx, w, c, id)
	case c.stream:
		return s.streamCompletion(ctx, w, c, id)
	case c.api == apiText:
		return s.answerText(ctx, w, c, id)
	}
	return s.answerCompletion(ctx, w, c, id)
}

// incoming is a request read and judged: its completion, or the error a
// careful server answers with; either way its dirty-data kind.
type incoming struct {
	body    []byte
	api     apiKind
	c       *completion
	aerr    *apiError
	arrived time.Time
	truth   *TruthRecord // nil without a truth log
	id      string       // the answer's id
}

// key is the hash of the request's content, 0 for one rejected.
func (in *incoming) key() uint64 {
	if in.c == nil {
		return 0
	}
	return in.c.key
}

// kind is the request's dirty-data kind, "" for a plain valid request.
func (in *incoming) kind() string {
	if in.aerr != nil {
		return in.aerr.kind
	}
	return in.c.kind
}

// completion is what to generate for in, even when it was rejected, with
// its arrival and truth record.
func (in *incoming) completion(cfg *Config) *completion {
	c := in.c
	if c == nil {
		c = fallbackCompletion(cfg, in.body, in.api)
		in.c = c // the span's, once answered
	}
	c.arrived, c.truth, c.id = in.arrived, in.truth, in.id
	return c
}

// read reads the body within MaxBodyBytes and judges it: the Content-Type
// first, then the body's size, bytes and depth, then its content.
func (s *Server) read(w http.ResponseWriter, r *http.Request, parse parser, api apiKind) *incoming {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	in := &incoming{body: body, api: api}
	var tooLarge *http.MaxBytesError
	switch in.aerr = checkContentType(r); {
	case in.aerr != nil:
	case errors.As(err, &tooLarge):
		in.aerr = newAPIError(http.StatusRequestEntityTooLarge, "", "request body exceeds %d bytes", s.cfg.MaxBodyBytes).as(KindOverlong)
	case err != nil:
		in.aerr = badRequest("", "reading the request body: %v", err)
	default:
		if in.aerr = checkBody(body); in.aerr == nil {
			in.c, in.aerr = parse(&s.cfg, body)
		}
		if in.c != nil {
			in.c.api = api
		}
	}
	return in
}

// generate admits c to the batch and passes emit each chunk of generated
// text at the moment the simulated model has produced it. It returns early
// with ctx's error, or with emit's, freeing the slot at once.
func (s *Server) generate(ctx context.Context, c *completion, emit func(text string) error) error {
	if s.cfg.fixed() {
		return s.generateFixed(ctx, c, emit)
	}
	c.queued = time.Now()
	if err := s.sched.acquire(ctx); err != nil {
		return err
	}
	defer s.sched.release()
	c.scheduled = time.Now()
	var z sleeper
	defer z.stop()
	c.cachedTokens = s.cache.admit(c.blocks)
	s.cachedTokens.Add(int64(c.cachedTokens))
	first := s.sched.prefill(c.promptTokens - c.cachedTokens)
	if err := z.until(ctx, first.end); err != nil {
		s.sched.cancel(first)
		return err
	}
	c.firstToken = first.end
	return s.decode(ctx, c, &z, emit)
}

// decode makes c's tokens from its first on, one decode step each, or
// with speculative decoding one step for each draft verified: the step's
// token and the drafts accepted, sent as one chunk.
func (s *Server) decode(ctx context.Context, c *completion, z *sleeper, emit func(text string) error) error {
	clk, words := s.sched.newClock(c.firstToken), newWordSource(c.key, s.cfg.Seed)
	drafts := s.spec.drafter(c.key, s.cfg.Seed)
	var chunk strings.Builder
	pending := 0 // tokens in chunk
	for made, at := 0, c.firstToken; made < c.outputTokens; {
		n := 1 // the prefill's token, or a plain step's
		if made > 0 {
			at = clk.tick()
			if err := z.until(ctx, at); err != nil {
				return err
			}
			n = min(1+drafts.step(), c.outputTokens-made)
		}
		for range n {
			compute(s.cfg.CPUPerToken)
			chunk.WriteString(words.next())
		}
		made, pending, c.lastToken = made+n, pending+n, at
		if drafts != nil || pending == s.cfg.TokensPerChunk || made == c.outputTokens {
			if err := c.emit(emit, chunk.String(), pending); err != nil {
				return err
			}
			chunk.Reset()
			pending = 0
		}
	}
	return nil
}

// compute spins for d, the CPU a token costs a model computed on the
// CPU: a busy loop, not a sleep, so that the machine is busy for it.
func compute(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// emit passes one chunk of n tokens to the answer's writer and, once a
// streamed chunk is flushed, notes it in the truth log's record.
func (c *completion) emit(emit func(string) error, text string, n int) error {
	sent := time.Now()
	if c.firstSent.IsZero() {
		c.firstSent = sent
	}
	c.chunkTokens = n
	c.sentTokens += n
	if err := emit(text); err != nil {
		return err
	}
	if c.stream {
		c.truth.text(n, sent)
	} else if c.truth != nil {
		c.truth.Tokens += n
	}
	return nil
}

// firstChunk and lastChunk tell a writer, while emit runs, whether the
// chunk it writes is the answer's first or last.
func (c *completion) firstChunk() bool { return c.sentTokens == c.chunkTokens }
func (c *completion) lastChunk() bool  { return c.sentTokens >= c.outputTokens }

// generateWhole generates c's whole text for a non-streamed answer.
func (s *Server) generateWhole(ctx context.Context, w http.ResponseWriter, c *completion) (string, error) {
	var text strings.Builder
	err := s.generate(ctx, c, func(t string) error { text.WriteString(t); return nil })
	if err != nil && s.ctx.Err() != nil { // else the client is gone: nobody to answer
		newAPIError(http.StatusServiceUnavailable, "", "the simulator is shutting down").writeFor(w, c.api)
	}
	return text.String(), err
}

// answerText generates c whole and answers with a text_completion.
func (s *Server) answerText(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	text, err := s.generateWhole(ctx, w, c)
	if err != nil {
		return err
	}
	u := usage(c)
	writeJSON(w, http.StatusOK, openai.CompletionResponse{
		ID: id, Object: "text_completion", Created: time.Now().Unix(), Model: s.cfg.Model,
		Choices: []openai.CompletionChoice{{Text: text, FinishReason: string(c.finish)}},
		Usage:   &u,
	})
	return nil
}

// answerCompletion generates c whole and answers with a chat.completion.
func (s *Server) answerCompletion(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	text, err := s.generateWhole(ctx, w, c)
	if err != nil {
		return err
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text}
	if p := c.tool; p != nil {
		msg.Content, msg.ToolCalls = "", []openai.ToolCall{{ID: p.id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: p.name, Arguments: p.piece(text, true, true)}}}
	}
	writeJSON(w, http.StatusOK, openai.ChatCompletionResponse{
		ID:      id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   s.cfg.Model,
		Choices: []openai.ChatCompletionChoice{{
			Message:      msg,
			FinishReason: c.finish,
		}},
		Usage:             usage(c),
		SystemFingerprint: systemFingerprint,
	})
	return nil
}

// usage reports c's tokens; prompt_tokens_details only when the prefix
// cache hit, as servers without a cache leave it out.
func usage(c *completion) openai.Usage {
	u := openai.Usage{
		PromptTokens:     c.promptTokens,
		CompletionTokens: c.usageTokens(),
		TotalTokens:      c.promptTokens + c.usageTokens(),
	}
	if c.cachedTokens > 0 {
		u.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: c.cachedTokens}
	}
	return u
}

// serveModels answers GET /v1/models with the one model served.
func (s *Server) serveModels(w http.ResponseWriter, _ *http.Request) {
	type modelList struct {
		Object string         `json:"object"`
		Data   []openai.Model `json:"data"`
	}
	writeJSON(w, http.StatusOK, modelList{Object: "list", Data: []openai.Model{{
		ID:         s.cfg.Model,
		Object:     "model",
		CreatedAt:  s.born,
		OwnedBy:    "llmload",
		Root:       s.cfg.Model,
		Permission: []openai.Permission{},
	}}})
}

// serveHealth answers GET /health with an empty 200, as vLLM does.
func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusOK)
}
