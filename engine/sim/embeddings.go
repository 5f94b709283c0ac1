package sim

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Embeddings limits, as OpenAI's API has them.
const (
	// DefaultEmbeddingDims is the length of a vector when the request
	// names no dimensions.
	DefaultEmbeddingDims = 384
	// MaxEmbeddingDims is the longest vector a request may ask for.
	MaxEmbeddingDims = 4096
	// MaxEmbeddingInputs is the most inputs one request may hold.
	MaxEmbeddingInputs = 2048
)

// embedJob is what an embeddings request embeds, and how it wants the
// vectors.
type embedJob struct {
	inputs []string
	dims   int
	base64 bool
}

// serveEmbeddings answers POST /v1/embeddings.
func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, parseEmbeddings, apiEmbeddings)
}

// embeddingsRequest is an embeddings request.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
}

// parseEmbeddings decodes and validates an embeddings request: a string
// or a list of strings (token arrays are not simulated), none empty or
// beyond the context window; encoding_format float or base64; dimensions
// in [1, MaxEmbeddingDims].
func parseEmbeddings(cfg *Config, body []byte) (*completion, *apiError) {
	var req embeddingsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	if req.Model != "" && req.Model != cfg.Model {
		return nil, newAPIError(404, "model", "The model %s does not exist.", quoteShort(req.Model)).as(KindUnknownModel)
	}
	inputs, aerr := embeddingInputs(req.Input)
	if aerr != nil {
		return nil, aerr
	}
	job := &embedJob{inputs: inputs, dims: DefaultEmbeddingDims}
	switch req.EncodingFormat {
	case "", "float":
	case "base64":
		job.base64 = true
	default:
		return nil, badRequest("encoding_format", "encoding_format must be float or base64, got %s", quoteShort(req.EncodingFormat))
	}
	if d := req.Dimensions; d != nil {
		if *d < 1 || *d > MaxEmbeddingDims {
			return nil, badRequest("dimensions", "dimensions must be between 1 and %d, got %d", MaxEmbeddingDims, *d)
		}
		job.dims = *d
	}
	c := &completion{embed: job, key: embedKey(cfg.Seed, job)}
	for i, in := range inputs {
		n, whole := inputTokens(cfg, in)
		if n > cfg.MaxContext {
			more := ""
			if !whole {
				n, more = cfg.MaxContext, "more than "
			}
			return nil, badRequest(fmt.Sprintf("input[%d]", i), "This model's maximum context length is %d tokens, however input[%d] has %s%d tokens.",
				cfg.MaxContext, i, more, n).as(KindOverlong)
		}
		c.promptTokens += n
	}
	c.kind = oddText(inputs)
	return c, nil
}

// inputTokens counts an input's tokens, with cfg's tokenizer when it has
// one; whole is false when the count stopped beyond the context window.
func inputTokens(cfg *Config, in string) (n int, whole bool) {
	if cfg.codec == nil {
		return CountTokens(in), true
	}
	ids, whole := encodeWithin(cfg.codec, in, cfg.MaxContext)
	return len(ids), whole
}

// embeddingInputs reads input: a string or a non-empty list of strings,
// none blank.
func embeddingInputs(raw json.RawMessage) ([]string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("input", "input is required").as(KindNoMessages)
	}
	var inputs []string
	var one string
	switch {
	case json.Unmarshal(raw, &one) == nil:
		inputs = []string{one}
	case json.Unmarshal(raw, &inputs) != nil:
		return nil, badRequest("input", "input must be a string or a list of strings (token arrays are not simulated)")
	case len(inputs) == 0:
		return nil, badRequest("input", "input must not be an empty list").as(KindNoMessages)
	case len(inputs) > MaxEmbeddingInputs:
		return nil, badRequest("input", "input holds %d items; at most %d are allowed", len(inputs), MaxEmbeddingInputs)
	}
	for i, in := range inputs {
		if strings.TrimSpace(in) == "" {
			return nil, badRequest(fmt.Sprintf("input[%d]", i), "input[%d] must not be empty", i).as(blankKind([]string{in}))
		}
	}
	return inputs, nil
}

// oddText is oddKind of texts.
func oddText(texts []string) string {
	msgs := make([]openai.ChatCompletionMessage, len(texts))
	for i, t := range texts {
		msgs[i] = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t}
	}
	return oddKind(msgs)
}

// embedKey hashes Config.Seed, the inputs and the dimensions: equal
// requests get equal vectors.
func embedKey(seed int64, job *embedJob) uint64 {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, [2]int64{seed, int64(job.dims)})
	for _, in := range job.inputs {
		_ = binary.Write(h, binary.LittleEndian, int64(len(in)))
		_, _ = h.Write([]byte(in))
	}
	return h.Sum64()
}

// vector is the embedding of text: unit length, a deterministic function
// of the text and the seed alone, so one input gets one vector whatever
// else its request holds.
func vector(seed int64, text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(seed)))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i], norm = float32(x), norm+x*x
	}
	scale := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= scale
	}
	return v
}

// embeddingData is one vector of an answer: floats, or base64 of their
// little-endian float32s.
type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// answerEmbeddings embeds c's inputs once their prefill has run (the
// batch slot and the prefill lane are a generation's), and answers with
// the vectors and usage.
func (s *Server) answerEmbeddings(ctx context.Context, w http.ResponseWriter, c *completion, id string) error {
	if err := s.embedWait(ctx, c); err != nil {
		if s.ctx.Err() != nil {
			newAPIError(http.StatusServiceUnavailable, "", "the simulator is shutting down").write(w)
		}
		return err
	}
	job := c.embed
	data := make([]embeddingData, len(job.inputs))
	for i, in := range job.inputs {
		v := vector(s.cfg.Seed, in, job.dims)
		data[i] = embeddingData{Object: "embedding", Index: i, Embedding: v}
		if job.base64 {
			b := make([]byte, 0, 4*len(v))
			for _, f := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(b)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": s.cfg.Model,
		"usage": map[string]int{"prompt_tokens": c.promptTokens, "total_tokens": c.promptTokens}})
	return nil
}

// embedWait waits for c's vectors: a prefill of its tokens in a batch
// slot, or FixedTTFT in the fixed-delay mode.
func (s *Server) embedWait(ctx context.Context, c *completion) error {
	var z sleeper
	defer z.stop()
	c.queued = time.Now()
	if s.cfg.fixed() {
		c.scheduled, c.firstToken = c.queued, c.arrived.Add(s.cfg.FixedTTFT)
		c.lastToken, c.firstSent = c.firstToken, c.firstToken
		return z.until(ctx, c.firstToken)
	}
	if err := s.sched.acquire(ctx); err != nil {
		return err
	}
	defer s.sched.release()
	c.scheduled = time.Now()
	done := s.sched.prefill(c.promptTokens)
	if err := z.until(ctx, done.end); err != nil {
		s.sched.cancel(done)
		return err
	}
	// The vectors are the prefill's only output: no decode.
	now := time.Now()
	c.firstToken, c.lastToken, c.firstSent = now, now, now
	return nil
}
