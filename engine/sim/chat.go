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
	s.serve(w, r, parseCompletion)
}

// serveTextCompletion answers POST /v1/completions.
func (s *Server) serveTextCompletion(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, parseTextCompletion)
}

// serve reads a request with parse and answers it, streamed or whole.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, parse func(*Config, []byte) (*completion, *apiError)) {
	s.requests.Add(1)
	c, aerr := s.readCompletion(w, r, parse)
	if aerr != nil {
		s.rejected.Add(1)
		aerr.write(w)
		return
	}
	ctx, cancel := s.requestContext(r.Context())
	defer cancel()
	prefix := "chatcmpl"
	if c.text {
		prefix = "cmpl"
	}
	id := fmt.Sprintf("%s-sim-%d-%08x", prefix, s.seq.Add(1), uint32(c.key))
	var err error
	switch {
	case c.stream && c.text:
		err = s.streamText(ctx, w, c, id)
	case c.stream:
		err = s.streamCompletion(ctx, w, c, id)
	case c.text:
		err = s.answerText(ctx, w, c, id)
	default:
		err = s.answerCompletion(ctx, w, c, id)
	}
	if err != nil {
		s.canceled.Add(1)
		return
	}
	s.completed.Add(1)
}

// readCompletion reads the body within MaxBodyBytes and validates it.
func (s *Server) readCompletion(w http.ResponseWriter, r *http.Request, parse func(*Config, []byte) (*completion, *apiError)) (*completion, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newAPIError(http.StatusRequestEntityTooLarge, "", "request body exceeds %d bytes", s.cfg.MaxBodyBytes)
	case err != nil:
		return nil, badRequest("", "reading the request body: %v", err)
	}
	return parse(&s.cfg, body)
}

// generate admits c to the batch and passes emit each chunk of generated
// text at the moment the simulated model has produced it. It returns early
// with ctx's error, or with emit's, freeing the slot at once.
func (s *Server) generate(ctx context.Context, c *completion, emit func(text string) error) error {
	if err := s.sched.acquire(ctx); err != nil {
		return err
	}
	defer s.sched.release()
	var z sleeper
	defer z.stop()
	first := s.sched.prefill(c.promptTokens)
	if err := z.until(ctx, first); err != nil {
		return err
	}
	clk, words := s.sched.newClock(first), newWordSource(c.key, s.cfg.Seed)
	var chunk strings.Builder
	for i := range c.outputTokens {
		if i > 0 {
			if err := z.until(ctx, clk.tick()); err != nil {
				return err
			}
		}
		chunk.WriteString(words.next())
		if (i+1)%s.cfg.TokensPerChunk == 0 || i == c.outputTokens-1 {
			if err := emit(chunk.String()); err != nil {
				return err
			}
			chunk.Reset()
		}
	}
	return nil
}

// generateWhole generates c's whole text for a non-streamed answer.
func (s *Server) generateWhole(ctx context.Context, w http.ResponseWriter, c *completion) (string, error) {
	var text strings.Builder
	err := s.generate(ctx, c, func(t string) error { text.WriteString(t); return nil })
	if err != nil && s.ctx.Err() != nil { // else the client is gone: nobody to answer
		newAPIError(http.StatusServiceUnavailable, "", "the simulator is shutting down").write(w)
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
	writeJSON(w, http.StatusOK, openai.ChatCompletionResponse{
		ID:      id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   s.cfg.Model,
		Choices: []openai.ChatCompletionChoice{{
			Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text},
			FinishReason: c.finish,
		}},
		Usage:             usage(c),
		SystemFingerprint: systemFingerprint,
	})
	return nil
}

func usage(c *completion) openai.Usage {
	return openai.Usage{
		PromptTokens:     c.promptTokens,
		CompletionTokens: c.outputTokens,
		TotalTokens:      c.promptTokens + c.outputTokens,
	}
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
