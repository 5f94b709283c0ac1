package sim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
)

// knownRoles are the message roles OpenAI-compatible servers accept.
var knownRoles = map[string]bool{
	openai.ChatMessageRoleSystem:    true,
	openai.ChatMessageRoleDeveloper: true,
	openai.ChatMessageRoleUser:      true,
	openai.ChatMessageRoleAssistant: true,
	openai.ChatMessageRoleTool:      true,
	openai.ChatMessageRoleFunction:  true,
}

// completion is a validated chat request reduced to what generation needs.
// Its output is fully decided before generation starts.
type completion struct {
	stream       bool
	includeUsage bool
	promptTokens int
	outputTokens int // ≥ 1
	finish       openai.FinishReason
	key          uint64    // hash of the request content and Config.Seed
	api          apiKind   // the API it came by, which shapes the answer
	blocks       []uint64  // prefix-cache block hashes of the prompt
	cachedTokens int       // prompt tokens found in the prefix cache, set at prefill
	firstToken   time.Time // when the first token existed, set by generate
	// queued, scheduled, lastToken and firstSent are the rest of the
	// request's timeline, as vLLM's RequestStateStats keeps it: asked for
	// a batch slot, held one, the last token existed, the first token
	// left for the client. Zero until reached.
	queued, scheduled, lastToken, firstSent time.Time
	maxTokens                               int       // the effective output limit
	id                                      string    // the answer's id, also its span's gen_ai.request.id
	complete                                bool      // generated and written to its end
	kind                                    string    // the valid-but-odd dirty kind, "" for plain text
	arrived                                 time.Time // when the handler began
	truth                                   *TruthRecord
	// tool is the tool call the answer makes instead of text; nil for a
	// text answer.
	tool *toolPlan
	// embed is what an embeddings request embeds; nil for the others.
	embed *embedJob
	// asked is what the request asked for, for the truth log.
	asked asked
	// textOnly answers a transcription with its bare text.
	textOnly bool
	// sentTokens are the tokens handed to the writer so far, chunkTokens
	// those of the chunk being written (see firstChunk).
	sentTokens, chunkTokens int
}

// parseCompletion decodes and validates a chat completion body against cfg.
// It never panics; bad input gets a 400 or 404 apiError.
func parseCompletion(cfg *Config, body []byte) (*completion, *apiError) {
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	ext, aerr := parseExtensions(body)
	if aerr != nil {
		return nil, aerr
	}
	if ext.media, aerr = chatMedia(cfg, body, req.Messages); aerr != nil {
		return nil, aerr
	}
	return checkChat(cfg, &req, ext)
}

// parseTextCompletion decodes and validates a legacy /v1/completions body
// against cfg: its prompt becomes the one user message of an equivalent
// chat request, validated the same way.
func parseTextCompletion(cfg *Config, body []byte) (*completion, *apiError) {
	var req openai.CompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	ext, aerr := parseExtensions(body)
	if aerr != nil {
		return nil, aerr
	}
	prompt, ok := req.Prompt.(string)
	switch {
	case req.Prompt == nil:
		return nil, badRequest("prompt", "prompt is required").as(KindNoMessages)
	case !ok:
		return nil, badRequest("prompt", "prompt must be a string (token arrays and batches are not simulated)")
	case strings.TrimSpace(prompt) == "":
		return nil, badRequest("prompt", "prompt must not be empty").as(blankKind([]string{prompt}))
	}
	chat := openai.ChatCompletionRequest{
		Model: req.Model, MaxTokens: req.MaxTokens, N: req.N, Seed: req.Seed,
		Temperature: req.Temperature, TopP: req.TopP, Stream: req.Stream, StreamOptions: req.StreamOptions,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}},
	}
	ext.raw = true
	return checkChat(cfg, &chat, ext)
}

// checkChat validates a decoded chat request and decides its output.
func checkChat(cfg *Config, req *openai.ChatCompletionRequest, ext extensions) (*completion, *apiError) {
	if req.Model != "" && req.Model != cfg.Model {
		return nil, newAPIError(404, "model", "The model %s does not exist.", quoteShort(req.Model)).as(KindUnknownModel)
	}
	prompt, aerr := readPrompt(cfg, req.Messages, ext.raw)
	if aerr != nil {
		return nil, aerr
	}
	if ext.media != nil {
		prompt.tokens += ext.media.tokens
	}
	if aerr := checkSampling(req); aerr != nil {
		return nil, aerr
	}
	maxTokens, aerr := outputLimit(cfg, req, prompt)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := ext.check(maxTokens); aerr != nil {
		return nil, aerr
	}
	c := &completion{
		stream:       req.Stream,
		includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		promptTokens: prompt.tokens,
		key:          contentKey(cfg.Seed, req, maxTokens, ext),
		blocks:       prompt.blocks,
		kind:         oddKind(req.Messages),
		asked:        askedOf(cfg, req, ext),
	}
	c.maxTokens = maxTokens
	c.outputTokens, c.finish = drawLength(cfg, c.key, maxTokens, ext)
	tools, choice, aerr := chatTools(req)
	if aerr != nil {
		return nil, aerr
	}
	if c.tool, aerr = planTool(tools, choice, lastRole(req.Messages), c.key); aerr != nil {
		return nil, aerr
	}
	if c.tool != nil {
		c.finish = openai.FinishReasonToolCalls
	}
	return c, nil
}

// checkTranslated judges a Messages or Responses request translated into
// chat's words, as a chat request is. Both APIs report usage in every
// stream, where chat does only when asked, so the answer always carries it.
func checkTranslated(cfg *Config, chat *openai.ChatCompletionRequest, m *mediaCount) (*completion, *apiError) {
	c, aerr := checkChat(cfg, chat, extensions{media: m})
	if c != nil {
		c.includeUsage = true
	}
	return c, aerr
}

// functionTool is a tool a Messages or Responses request declares, as the
// chat function it amounts to.
func functionTool(name string, params any) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name, Parameters: params}}
}

// promptTokens validates the messages and estimates their tokens with
// CountTokens, chat template included.
func promptTokens(msgs []openai.ChatCompletionMessage) (int, *apiError) {
	if aerr := checkMessages(msgs); aerr != nil {
		return 0, aerr
	}
	tokens := replyPrimer
	for i := range msgs {
		text, _ := messageText(i, &msgs[i])
		tokens += messageOverhead + CountTokens(text)
	}
	return tokens, nil
}

// checkMessages validates the messages. A request needs at least one user
// message with non-blank text: one whose only user input is empty or
// whitespace is rejected, while empty system, assistant (tool-calling) or
// tool messages are fine. Invisible characters such as U+200B are not
// whitespace, so they count as text.
func checkMessages(msgs []openai.ChatCompletionMessage) *apiError {
	if len(msgs) == 0 {
		return badRequest("messages", "messages must be a non-empty array").as(KindNoMessages)
	}
	userText, userTexts := false, []string(nil)
	for i := range msgs {
		m := &msgs[i]
		if !knownRoles[m.Role] {
			return badRequest(fmt.Sprintf("messages[%d].role", i),
				"messages[%d].role: unknown role %s; expected system, developer, user, assistant, tool or function", i, quoteShort(m.Role)).as(KindBadRole)
		}
		text, aerr := messageText(i, m)
		if aerr != nil {
			return aerr
		}
		if m.Role == openai.ChatMessageRoleUser {
			userText = userText || strings.TrimSpace(text) != "" || hasMedia(m)
			userTexts = append(userTexts, text)
		}
	}
	if !userText {
		return badRequest("messages", "messages must contain a user message with non-empty content").as(blankKind(userTexts))
	}
	return nil
}

// messageText is the text of a message, either its string content or the
// concatenation of its text parts; media parts, counted apart (see
// chatMedia), add no text.
func messageText(i int, m *openai.ChatCompletionMessage) (string, *apiError) {
	if len(m.MultiContent) == 0 {
		return m.Content, nil
	}
	var b strings.Builder
	for j, part := range m.MultiContent {
		switch part.Type {
		case openai.ChatMessagePartTypeText:
			b.WriteString(part.Text)
		case openai.ChatMessagePartTypeImageURL, partInputAudio, partVideoURL:
		default:
			param := fmt.Sprintf("messages[%d].content[%d].type", i, j)
			return "", badRequest(param, "%s: unknown content part type %s; expected text, image_url, input_audio or video_url", param, quoteShort(string(part.Type)))
		}
	}
	return b.String(), nil
}

// hasMedia reports a part other than text in a message.
func hasMedia(m *openai.ChatCompletionMessage) bool {
	for _, part := range m.MultiContent {
		if part.Type != openai.ChatMessagePartTypeText {
			return true
		}
	}
	return false
}

// checkSampling validates the sampling parameters the simulator honours or
// that a real server would reject.
func checkSampling(req *openai.ChatCompletionRequest) *apiError {
	switch {
	case req.N < 0 || req.N > 1:
		return badRequest("n", "n must be 1, got %d: the simulator returns one choice", req.N)
	case !(req.Temperature >= 0 && req.Temperature <= 2):
		return badRequest("temperature", "temperature must be between 0 and 2, got %v", req.Temperature)
	case !(req.TopP >= 0 && req.TopP <= 1):
		return badRequest("top_p", "top_p must be in (0, 1], got %v", req.TopP)
	case req.StreamOptions != nil && !req.Stream:
		return badRequest("stream_options", "stream_options is only allowed when stream is true")
	}
	return nil
}

// outputLimit is the effective max_tokens. max_completion_tokens wins over
// the older max_tokens; 0 means absent (go-openai cannot tell them apart),
// and then DefaultMaxTokens applies, lowered to what the context leaves.
func outputLimit(cfg *Config, req *openai.ChatCompletionRequest, p prompt) (int, *apiError) {
	param, limit := "max_completion_tokens", req.MaxCompletionTokens
	if limit == 0 {
		param, limit = "max_tokens", req.MaxTokens
	}
	if req.MaxTokens < 0 || req.MaxCompletionTokens < 0 {
		return 0, badRequest(param, "%s must be at least 1, got %d", param, limit).as(KindNegativeMax)
	}
	prompt := p.tokens
	room := cfg.MaxContext - prompt
	if p.over {
		return 0, badRequest("messages", "This model's maximum context length is %d tokens. However, your messages resulted in more than %d tokens. Please reduce the length of the messages.", cfg.MaxContext, cfg.MaxContext).as(KindOverlong)
	}
	if room <= 0 {
		return 0, badRequest("messages", "This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", cfg.MaxContext, prompt).as(KindOverlong)
	}
	if limit == 0 {
		return min(cfg.DefaultMaxTokens, room), nil
	}
	if limit > room { // not prompt+limit > max: limit may be near MaxInt
		return 0, badRequest(param, "This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			cfg.MaxContext, int64(prompt)+int64(limit), prompt, limit).as(blame(prompt, limit))
	}
	return limit, nil
}

// asked is what a request asked for beyond its content, as sent.
type asked struct {
	maxTokens int   // max_completion_tokens, else max_tokens; 0 when absent
	minTokens *int  // nil when not sent
	ignoreEOS *bool // nil when not sent
	prompt    string
	media     *mediaCount // nil without media parts
}

// askedOf is what req asked for; its prompt text only with
// Config.TruthPrompts, since the truth log is the only reader.
func askedOf(cfg *Config, req *openai.ChatCompletionRequest, ext extensions) asked {
	a := asked{maxTokens: req.MaxCompletionTokens, minTokens: ext.MinTokens, ignoreEOS: ext.IgnoreEOS, media: ext.media}
	if a.maxTokens == 0 {
		a.maxTokens = req.MaxTokens
	}
	if cfg.TruthPrompts && cfg.TruthLog != nil {
		a.prompt = promptText(req.Messages)
	}
	return a
}

// contentKey hashes Config.Seed and every request field that changes a real
// model's output, so equal requests get equal answers whatever their order.
func contentKey(seed int64, req *openai.ChatCompletionRequest, maxTokens int, ext extensions) uint64 {
	h := fnv.New64a()
	num := func(v uint64) { _, _ = h.Write(binary.LittleEndian.AppendUint64(nil, v)) }
	str := func(s string) { num(uint64(len(s))); _, _ = h.Write([]byte(s)) }
	num(uint64(seed))
	for i := range req.Messages {
		m := &req.Messages[i]
		text, _ := messageText(i, m) // validated already
		str(m.Role)
		str(text)
	}
	num(uint64(maxTokens))
	num(uint64(math.Float32bits(req.Temperature))<<32 | uint64(math.Float32bits(req.TopP)))
	if req.Seed != nil {
		num(1)
		num(uint64(*req.Seed))
	}
	// Only when set, so that keys (and answers) of plain requests stay put.
	for i, t := range req.Tools {
		if i == 0 {
			num(3)
		}
		if t.Function != nil {
			str(t.Function.Name)
		}
	}
	if ext.media != nil {
		num(4)
		num(ext.media.print)
	}
	if ext.IgnoreEOS != nil || ext.MinTokens != nil {
		num(2)
		num(uint64(ext.minTokens()))
		if ext.ignoreEOS() {
			num(1)
		}
	}
	return h.Sum64()
}

// engineFinish is the finish reason as vLLM's engine names it (a tool
// call ends with "stop" there: the API layer renames it).
func (c *completion) engineFinish() string {
	if c.finish == openai.FinishReasonLength {
		return "length"
	}
	return "stop"
}

// drawLength decides the output length and finish reason of a request.
// ignore_eos runs to max_tokens; min_tokens raises the shortest stop.
func drawLength(cfg *Config, key uint64, maxTokens int, ext extensions) (int, openai.FinishReason) {
	if ext.ignoreEOS() || cfg.fixed() {
		return maxTokens, openai.FinishReasonLength
	}
	rng := rand.New(rand.NewPCG(key, uint64(cfg.Seed)))
	lo := max(1, min(max(cfg.MinOutputTokens, ext.minTokens()), maxTokens))
	if lo < maxTokens && rng.Float64() < cfg.StopFraction {
		return lo + rng.IntN(maxTokens-lo), openai.FinishReasonStop
	}
	return maxTokens, openai.FinishReasonLength
}
