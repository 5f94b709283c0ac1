package sim

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/engine/tokenize"
)

// Default configuration values. They are tuned so that a closed-loop sweep
// over 1, 4, 8 and 16 VUs with max_tokens 200 shows the two shapes a real
// continuous-batching server shows: throughput grows almost linearly up to
// MaxBatch concurrent requests (a decode step barely slows as the batch
// grows) and then flattens, while TTFT jumps once requests must queue for a
// slot. A 200-token answer takes about 1.6 s alone.
const (
	// DefaultModel is the model name served.
	DefaultModel = "llmload-sim"
	// DefaultMaxBatch is the number of decode slots.
	DefaultMaxBatch = 8
	// DefaultPrefillBase is the fixed cost of a prefill.
	DefaultPrefillBase = 15 * time.Millisecond
	// DefaultPrefillPerToken is the prefill cost of each prompt token.
	DefaultPrefillPerToken = 100 * time.Microsecond
	// DefaultDecodeBase is one decode step with one running sequence.
	DefaultDecodeBase = 8 * time.Millisecond
	// DefaultDecodePerSeq is what each further running sequence adds to a step.
	DefaultDecodePerSeq = 250 * time.Microsecond
	// DefaultPrefillInterference is the share of a prefill that stalls the batch.
	DefaultPrefillInterference = 0.5
	// DefaultMaxContext is the context window in tokens.
	DefaultMaxContext = 32768
	// DefaultMaxTokens is the output limit of a request without max_tokens.
	DefaultMaxTokens = 256
	// DefaultMinOutputTokens is the shortest answer that ends with "stop".
	DefaultMinOutputTokens = 16
	// DefaultStopFraction is the share of answers that end before max_tokens.
	DefaultStopFraction = 0.25
	// DefaultTokensPerChunk is the number of tokens per streamed chunk.
	DefaultTokensPerChunk = 1
	// DefaultMaxBodyBytes bounds a request body. It is well above the 2 MB
	// an "overlong" dirty request sends, so that one is read and answered
	// with the context-length 400 a real server gives, not a 413, and
	// above the base64 of a DefaultMaxImageBytes image (26.7 MB), so
	// that an image is judged by its own bound.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultPrefixCacheTokens is the prefix cache's capacity, in tokens.
	DefaultPrefixCacheTokens = 1_000_000
	// DefaultMaxImages is the most images one request may carry, vLLM's
	// usual --limit-mm-per-prompt for a vision model.
	DefaultMaxImages = 16
	// DefaultMaxImageBytes bounds one decoded image, audio or video item:
	// OpenAI's limit for an image.
	DefaultMaxImageBytes = media.DefaultMaxBytes
	// DefaultURLImageSide is the side, in pixels, an image sent by http(s)
	// URL is counted as: the simulator never fetches it.
	DefaultURLImageSide = 1024
	// DefaultSpeechRTF is how many times faster than real time speech is
	// produced.
	DefaultSpeechRTF = 20
)

// Config shapes the simulated model. The zero value is usable: a zero field
// takes its Default* constant. As with net.Dialer.KeepAlive, a negative
// duration or fraction means "none" (zero cost, never), because zero already
// means "default".
type Config struct {
	// Model is the only model served; requests naming another get 404.
	// Requests that leave the model out are served by it, as vLLM does.
	Model string
	// MaxBatch is the number of concurrent decode slots. Requests beyond it
	// wait first come, first served, and the wait adds to their TTFT.
	MaxBatch int
	// PrefillBase and PrefillPerToken make up the prefill time of a request:
	// base + per-token × prompt tokens. Prefills run one at a time, as they
	// are compute-bound on a real accelerator.
	PrefillBase     time.Duration
	PrefillPerToken time.Duration
	// DecodeBase is the time of one decode step with one running sequence;
	// each additional running sequence adds DecodePerSeq to every step.
	DecodeBase   time.Duration
	DecodePerSeq time.Duration
	// PrefillInterference is the fraction of each prefill's time by which
	// every running sequence's next token is delayed, the ITL spike real
	// servers show when a new request joins the batch. At most 1.
	PrefillInterference float64
	// MaxContext is the context window: prompt tokens + max_tokens beyond it
	// get 400.
	MaxContext int
	// DefaultMaxTokens applies when a request has no max_tokens; it is
	// lowered to what the context window leaves.
	DefaultMaxTokens int
	// MinOutputTokens and StopFraction draw each request's output length:
	// with probability StopFraction the answer ends early ("stop") at a
	// length uniform in [MinOutputTokens, max_tokens), otherwise it runs to
	// max_tokens ("length"). StopFraction is at most 1.
	MinOutputTokens int
	StopFraction    float64
	// Seed makes output lengths and text reproducible; see the package doc.
	Seed int64
	// APIKey, when set, is required as "Authorization: Bearer <key>" on
	// every /v1 route, or alone in an api-key or x-api-key header (x-api-key
	// only on /v1/messages). It never appears in responses or errors.
	APIKey string
	// TokensPerChunk is the number of tokens in each streamed content chunk.
	TokensPerChunk int
	// MaxBodyBytes bounds a request body; larger bodies get 413.
	MaxBodyBytes int64
	// PrefixCacheTokens is the capacity of the KV prefix cache, in tokens
	// (whole blocks of BlockTokens); negative disables the cache. Cached
	// prompt tokens cost no prefill time.
	PrefixCacheTokens int
	// FixedTTFT and FixedITL, both set, select the fixed-delay mode: every
	// request's first token exists FixedTTFT after it arrived and each
	// next one FixedITL later, however many run at once (no batch slots,
	// no queue, no prefill lane); answers run to max_tokens, and streams
	// carry the role in the first content chunk rather than a chunk of
	// its own. It is the reference a client's accuracy is measured against.
	FixedTTFT, FixedITL time.Duration
	// TruthLog, when set, receives one JSON line (a TruthRecord) per
	// completion request, written when its handler returns and flushed by
	// Close.
	TruthLog io.Writer
	// TruthPrompts adds each request's prompt text to its truth-log
	// record, so that a test can tell which requests shared a prefix; it
	// is off by default because prompts can be large.
	TruthPrompts bool
	// Defects maps a dirty-data kind (DirtyKinds) to a misbehaviour
	// (DefectBehaviours) the server shows on requests of that kind instead
	// of its careful answer, to test how a client copes. See ParseDefects.
	Defects map[string]string
	// Tokenizer, when set, counts prompt tokens with a real tokenizer (a
	// name engine/tokenize.Get accepts: "cl100k_base", "o200k_base", a
	// tokenizer.json path) and cuts the prefix cache's blocks from its
	// token ids, so that usage and cache hits are a real server's. ""
	// and TokenizerNone keep CountTokens' estimate, which costs a
	// twentieth as much CPU and no garbage.
	Tokenizer string
	// CPUPerToken is CPU time the simulated model spends on each output
	// token, spun on the request's goroutine when the token is due, so
	// that the simulator loads its machine as a CPU inference server
	// (llama.cpp without a GPU) does: for runs against a server on
	// llmload's own machine. Each token leaves that much later. Zero, the
	// default, spins nothing; the fixed-delay mode, whose delays are
	// exact, refuses it. The spin reads the clock, so it never ends in a
	// synctest bubble.
	CPUPerToken time.Duration
	// ImageTokens names the formula counting an image's prompt tokens
	// (ImageTokenFormulas; "" is ImageTokensQwen2VL).
	ImageTokens string
	// MaxImages is the most images a request may carry; more get 400.
	MaxImages int
	// MaxImageBytes bounds each decoded media item of a request; a larger
	// one gets 400.
	MaxImageBytes int
	// URLImageSide is the side of the square image an http(s) image URL
	// is counted as, since the simulator does not fetch it.
	URLImageSide int
	// SpeechRTF is the real-time factor of /v1/audio/speech: audio of d
	// seconds is sent in d / SpeechRTF after its first byte.
	SpeechRTF float64
	// OTLPTracesEndpoint, when set, receives one OTLP span per request
	// (see the package doc, "Traces"), as vLLM's --otlp-traces-endpoint
	// does: a URL, or host:port for plain http. An http/protobuf URL
	// without a path posts to /v1/traces.
	OTLPTracesEndpoint string
	// OTLPTracesProtocol is ProtocolHTTPProtobuf ("", the default) or
	// ProtocolGRPC.
	OTLPTracesProtocol string
	// SpecTokens, when positive, turns on speculative decoding: each
	// decode step drafts this many tokens (at most MaxSpecTokens).
	SpecTokens int
	// SpecAccept is the chance each draft token is accepted, in order
	// until the first rejected; zero is DefaultSpecAccept and negative
	// accepts none. At most 1.
	SpecAccept float64

	codec tokenize.Codec // Tokenizer's, set by withDefaults; nil: estimate
}

// TokenizerNone is the Config.Tokenizer that keeps the estimate, as
// options.target.tokenizer names it.
const TokenizerNone = "none"

// Validate reports every out-of-range value, which New would silently
// replace by its default (or clamp, for DefaultMaxTokens), so that a
// command line can reject bad flags instead.
func (c Config) Validate() error {
	var errs []error
	bad := func(cond bool, format string, args ...any) {
		if cond {
			errs = append(errs, fmt.Errorf("sim: "+format, args...))
		}
	}
	bad(c.MaxBatch < 0, "max batch %d is negative", c.MaxBatch)
	bad(c.MaxContext < 0, "max context %d is negative", c.MaxContext)
	bad(c.DefaultMaxTokens < 0, "default max tokens %d is negative", c.DefaultMaxTokens)
	bad(c.MinOutputTokens < 0, "min output tokens %d is negative", c.MinOutputTokens)
	bad(c.TokensPerChunk < 0, "tokens per chunk %d is negative", c.TokensPerChunk)
	bad(c.MaxBodyBytes < 0, "max body bytes %d is negative", c.MaxBodyBytes)
	bad(!(c.StopFraction <= 1), "stop fraction %v is not at most 1", c.StopFraction)
	bad(!(c.PrefillInterference <= 1), "prefill interference %v is not at most 1", c.PrefillInterference)
	bad(c.FixedTTFT < 0 || c.FixedITL < 0, "fixed delays %s, %s are negative", c.FixedTTFT, c.FixedITL)
	bad((c.FixedTTFT > 0) != (c.FixedITL > 0), "fixed-delay mode needs both a TTFT and an ITL (got %s, %s)", c.FixedTTFT, c.FixedITL)
	bad(c.MaxImages < 0, "max images %d is negative", c.MaxImages)
	bad(c.MaxImageBytes < 0, "max image bytes %d is negative", c.MaxImageBytes)
	bad(c.URLImageSide < 0, "URL image side %d is negative", c.URLImageSide)
	bad(!(c.SpeechRTF >= 0) || math.IsInf(c.SpeechRTF, 0), "speech real-time factor %v is not a positive number", c.SpeechRTF)
	if c.ImageTokens != "" && !slices.Contains(ImageTokenFormulas(), c.ImageTokens) {
		errs = append(errs, fmt.Errorf("sim: image tokens %q is not a formula; expected one of %s", c.ImageTokens, strings.Join(ImageTokenFormulas(), ", ")))
	}
	bad(c.CPUPerToken < 0, "CPU per token %s is negative", c.CPUPerToken)
	bad(c.CPUPerToken > 0 && c.FixedTTFT > 0, "the fixed-delay mode's delays are exact: no CPU per token (got %s)", c.CPUPerToken)
	if err := c.checkTraces(); err != nil {
		errs = append(errs, fmt.Errorf("sim: %w", err))
	}
	bad(c.SpecTokens < 0 || c.SpecTokens > MaxSpecTokens, "spec tokens %d: from 0 to %d", c.SpecTokens, MaxSpecTokens)
	bad(!(c.SpecAccept <= 1), "spec accept %v is not at most 1", c.SpecAccept)
	bad(c.SpecAccept != 0 && c.SpecTokens == 0, "spec accept %v needs spec tokens", c.SpecAccept)
	bad(c.SpecTokens > 0 && c.TokensPerChunk > 1, "speculative decoding sends each step's tokens as one chunk: no tokens per chunk (got %d)", c.TokensPerChunk)
	bad(c.SpecTokens > 0 && c.FixedTTFT > 0, "the fixed-delay mode has no decode steps to speculate on")
	for _, kind := range slices.Sorted(maps.Keys(c.Defects)) {
		if err := checkDefect(kind, c.Defects[kind]); err != nil {
			errs = append(errs, fmt.Errorf("sim: defect %s=%s: %w", kind, c.Defects[kind], err))
		}
	}
	if c.countsTokens() {
		if _, err := tokenize.Get(c.Tokenizer); err != nil {
			errs = append(errs, fmt.Errorf("sim: tokenizer: %w", err))
		}
	}
	if c.DefaultMaxTokens > 0 {
		ctx := orDefault(c.MaxContext, DefaultMaxContext)
		bad(c.DefaultMaxTokens > ctx, "default max tokens %d exceed the context window of %d", c.DefaultMaxTokens, ctx)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero or invalid field replaced.
func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	c.MaxBatch = orDefault(c.MaxBatch, DefaultMaxBatch)
	c.PrefillBase = duration(c.PrefillBase, DefaultPrefillBase)
	c.PrefillPerToken = duration(c.PrefillPerToken, DefaultPrefillPerToken)
	c.DecodeBase = duration(c.DecodeBase, DefaultDecodeBase)
	c.DecodePerSeq = duration(c.DecodePerSeq, DefaultDecodePerSeq)
	c.PrefillInterference = fraction(c.PrefillInterference, DefaultPrefillInterference)
	c.MaxContext = orDefault(c.MaxContext, DefaultMaxContext)
	c.DefaultMaxTokens = min(orDefault(c.DefaultMaxTokens, DefaultMaxTokens), c.MaxContext)
	c.MinOutputTokens = orDefault(c.MinOutputTokens, DefaultMinOutputTokens)
	c.StopFraction = fraction(c.StopFraction, DefaultStopFraction)
	c.TokensPerChunk = orDefault(c.TokensPerChunk, DefaultTokensPerChunk)
	c.MaxBodyBytes = orDefault(c.MaxBodyBytes, DefaultMaxBodyBytes)
	if !slices.Contains(ImageTokenFormulas(), c.ImageTokens) {
		c.ImageTokens = ImageTokensQwen2VL
	}
	c.MaxImages = orDefault(c.MaxImages, DefaultMaxImages)
	c.MaxImageBytes = orDefault(c.MaxImageBytes, DefaultMaxImageBytes)
	c.URLImageSide = orDefault(c.URLImageSide, DefaultURLImageSide)
	if !(c.SpeechRTF > 0) || math.IsInf(c.SpeechRTF, 0) {
		c.SpeechRTF = DefaultSpeechRTF
	}
	if c.PrefixCacheTokens == 0 {
		c.PrefixCacheTokens = DefaultPrefixCacheTokens
	}
	c.Defects = validDefects(c.Defects)
	if c.checkTraces() != nil {
		c.OTLPTracesEndpoint = ""
	}
	if c.OTLPTracesProtocol == "" {
		c.OTLPTracesProtocol = ProtocolHTTPProtobuf
	}
	c.SpecAccept = fraction(c.SpecAccept, DefaultSpecAccept)
	if c.SpecTokens < 0 || c.SpecTokens > MaxSpecTokens {
		c.SpecTokens = 0
	}
	c.codec = nil
	if c.countsTokens() {
		c.codec, _ = tokenize.Get(c.Tokenizer) // nil on error: the estimate, as Validate warned
	}
	if c.FixedTTFT <= 0 || c.FixedITL <= 0 {
		c.FixedTTFT, c.FixedITL = 0, 0
	}
	if c.SpecTokens > 0 { // as Validate says: one chunk a step, and steps to speculate on
		c.TokensPerChunk = 1
		if c.fixed() {
			c.SpecTokens = 0
		}
	}
	return c
}

// countsTokens reports a Tokenizer other than the estimate.
func (c *Config) countsTokens() bool { return c.Tokenizer != "" && c.Tokenizer != TokenizerNone }

func orDefault[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func duration(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func fraction(f, def float64) float64 {
	switch {
	case f == 0 || !(f <= 1): // NaN too
		return def
	case f < 0:
		return 0
	}
	return f
}
