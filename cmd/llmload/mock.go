package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/tokenize"
)

const mockUsage = `Usage: llmload mock [flags]

Serves the built-in OpenAI-compatible simulator (continuous batching, a FIFO
queue beyond --max-batch, prefill and decode costs, a prefix cache) until
interrupted. It answers malformed input like a careful server (clean 4xx with
an error body) unless told to mishandle chosen kinds with --defect.

Images, audio and video in content parts are decoded and counted as prompt
tokens (--image-tokens; 25 tokens a second of audio; a video's frames, 2 a
second up to 32, as 448x448 images), and prefilled like text; an http(s) image
URL is not fetched but counted as a 1024x1024 image. /v1/audio/transcriptions
and /v1/audio/speech (wav or pcm, --speech-rtf) are served too.

Every answer's id is also its X-Request-Id header. With --otlp-traces-endpoint
each request ends one OTLP span as vLLM's does (llm_request, gen_ai.* latency
attributes, the caller's traceparent continued). --spec-tokens K simulates
speculative decoding: 1 + accepted drafts per streamed chunk, and vLLM's
vllm:spec_decode_* counters in /metrics.

Flags:
`

func mockCmd(args []string, stdout, stderr io.Writer) (err error) {
	var cfg sim.Config
	var addr, truthPath, cpuProfile string
	var defects []string
	fs := pflag.NewFlagSet("mock", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mockUsage+fs.FlagUsages()) }
	fs.StringVar(&addr, "addr", "127.0.0.1:8000", "listen address")
	fs.StringVar(&cfg.Model, "model", "", "model name served (default "+sim.DefaultModel+")")
	fs.IntVar(&cfg.MaxBatch, "max-batch", 0, "concurrent decode slots; more requests queue (default 8)")
	fs.IntVar(&cfg.MaxContext, "max-context", 0, fmt.Sprintf("context window in tokens: a prompt and its max_tokens beyond it get 400, as vLLM's --max-model-len (default %d)", sim.DefaultMaxContext))
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed: same seed and requests give the same answers")
	fs.StringArrayVar(&defects, "defect", nil, "mishandle a dirty-data kind on purpose, kind=behaviour (500, 503, 200, hang, reset, truncate); repeatable")
	fs.IntVar(&cfg.PrefixCacheTokens, "prefix-cache", 0, "prefix cache capacity in tokens (default 1000000; negative: no cache)")
	fs.DurationVar(&cfg.PrefillBase, "prefill-base", 0, "fixed prefill cost per request (default 15ms; negative: none)")
	fs.DurationVar(&cfg.PrefillPerToken, "prefill-per-token", 0, "prefill cost per prompt token (default 100µs; negative: none)")
	fs.DurationVar(&cfg.DecodeBase, "decode-base", 0, "time per decode step at batch 1 (default 8ms; negative: none)")
	fs.DurationVar(&cfg.DecodePerSeq, "decode-per-seq", 0, "extra decode time per step per other running request (default 250µs; negative: none)")
	fs.DurationVar(&cfg.FixedTTFT, "fixed-ttft", 0, "fixed-delay mode: every request's first token this long after it arrived, however many run (needs --fixed-itl)")
	fs.DurationVar(&cfg.FixedITL, "fixed-itl", 0, "fixed-delay mode: one token this often after the first; answers run to max_tokens (needs --fixed-ttft)")
	fs.IntVar(&cfg.TokensPerChunk, "tokens-per-chunk", 0, "tokens in each streamed chunk (default 1)")
	fs.DurationVar(&cfg.CPUPerToken, "cpu-per-token", 0, "CPU to spin on each output token, as a server computing on the CPU does (for runs against a server on llmload's machine; default none)")
	fs.StringVar(&truthPath, "truth-log", "", "write each request as the server saw it (arrival, TTFT, TPOT, E2E, tokens) to this JSONL file, for `llmload report --truth`")
	fs.BoolVar(&cfg.TruthPrompts, "truth-log-prompts", false, "also write each request's prompt text to the --truth-log")
	fs.StringVar(&cfg.Tokenizer, "tokenizer", "", "count prompt tokens and cut prefix-cache blocks with this tokenizer: "+
		strings.Join(tokenize.Names(), ", ")+" or a tokenizer.json path (default: estimate, ~4 characters a token)")
	fs.StringVar(&cfg.ImageTokens, "image-tokens", sim.ImageTokensQwen2VL, "the formula counting an image's prompt tokens: "+
		strings.Join(sim.ImageTokenFormulas(), ", ")+" (Qwen2-VL's 28-px blocks, 14-px patches, LLaVA-1.5's fixed 576)")
	fs.IntVar(&cfg.MaxImages, "max-images", sim.DefaultMaxImages, "most images a request may carry; more get 400")
	fs.IntVar(&cfg.MaxImageBytes, "max-image-bytes", sim.DefaultMaxImageBytes, "largest decoded image, audio or video item of a request, in bytes; larger get 400")
	fs.Float64Var(&cfg.SpeechRTF, "speech-rtf", sim.DefaultSpeechRTF, "/v1/audio/speech sends audio this many times faster than real time")
	fs.StringVar(&cpuProfile, "cpu-profile", "", "write a CPU profile of the simulator to this file (go tool pprof reads it)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "require this bearer key (default: none; env LLMLOAD_MOCK_API_KEY)")
	fs.StringVar(&cfg.OTLPTracesEndpoint, "otlp-traces-endpoint", "", "export one OTLP span per request (vLLM's llm_request) to this URL, or host:port (default: none)")
	fs.StringVar(&cfg.OTLPTracesProtocol, "otlp-traces-protocol", "", "the OTLP protocol of --otlp-traces-endpoint: http/protobuf or grpc (default: env "+sim.EnvTracesProtocol+", else http/protobuf)")
	fs.IntVar(&cfg.SpecTokens, "spec-tokens", 0, "speculative decoding: draft tokens proposed per decode step (default none)")
	fs.Float64Var(&cfg.SpecAccept, "spec-accept", sim.DefaultSpecAccept, "speculative decoding: the chance each draft token is accepted, in order until the first rejected")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("mock: %v", err)
	}
	if fs.NArg() != 0 {
		return usagef("mock: unexpected arguments %v", fs.Args())
	}
	if env := os.Getenv(sim.EnvTracesProtocol); env != "" && !fs.Changed("otlp-traces-protocol") {
		if env != sim.ProtocolHTTPProtobuf && env != sim.ProtocolGRPC {
			return usagef("mock: %s=%s: expected %s or %s", sim.EnvTracesProtocol, env, sim.ProtocolHTTPProtobuf, sim.ProtocolGRPC)
		}
		cfg.OTLPTracesProtocol = env
	}
	if !fs.Changed("spec-accept") && cfg.SpecTokens == 0 {
		cfg.SpecAccept = 0 // the default needs no spec tokens
	}
	if cfg.Defects, err = sim.ParseDefects(defects); err != nil {
		return usagef("mock: %v", err)
	}
	if cfg.TruthPrompts && truthPath == "" {
		return usagef("mock: --truth-log-prompts needs --truth-log")
	}
	if cfg.Tokenizer != "" && cfg.Tokenizer != sim.TokenizerNone {
		if _, err := tokenize.Get(cfg.Tokenizer); err != nil {
			return usagef("mock: --tokenizer %s: %v", cfg.Tokenizer, err)
		}
	}
	if err := checkMediaFlags(&cfg); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usagef("mock: %v", err)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("LLMLOAD_MOCK_API_KEY")
	}
	if cpuProfile != "" {
		stop, err := startCPUProfile(cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if truthPath != "" {
		f, err := os.Create(truthPath)
		if err != nil {
			return fmt.Errorf("mock: truth log: %w", err)
		}
		defer f.Close()
		cfg.TruthLog = f
	}
	srv := sim.New(cfg)
	url, err := srv.Start(addr)
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	defer func() {
		if cerr := srv.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("mock: %w", cerr)
		}
		if cfg.OTLPTracesEndpoint != "" { // after Close's flush, which counts the dropped
			printSpanStats(stderr, srv.Stats().Spans)
		}
	}()
	model := cfg.Model
	if model == "" {
		model = sim.DefaultModel
	}
	fmt.Fprintf(stdout, "llmload mock: serving model %s at %s (Ctrl-C to stop)\n", model, url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// printSpanStats says what became of the spans, the lost ones first.
func printSpanStats(w io.Writer, st sim.SpanStats) {
	fmt.Fprintf(w, "llmload mock: spans: %d ended, %d exported, %d failed to export, %d dropped\n", st.Ended, st.Exported, st.Failed, st.Dropped)
	if st.LastError != "" {
		fmt.Fprintf(w, "llmload mock: spans: last export error: %s\n", st.LastError)
	}
}

// checkMediaFlags rejects the media flags' bad values, naming the flag.
func checkMediaFlags(cfg *sim.Config) error {
	switch {
	case !slices.Contains(sim.ImageTokenFormulas(), cfg.ImageTokens):
		return usagef("mock: --image-tokens %s: not a formula; expected %s", cfg.ImageTokens, strings.Join(sim.ImageTokenFormulas(), ", "))
	case cfg.MaxImages < 1:
		return usagef("mock: --max-images %d: at least 1", cfg.MaxImages)
	case cfg.MaxImageBytes < 1:
		return usagef("mock: --max-image-bytes %d: at least 1", cfg.MaxImageBytes)
	case !(cfg.SpeechRTF > 0) || math.IsInf(cfg.SpeechRTF, 0):
		return usagef("mock: --speech-rtf %v: a positive number", cfg.SpeechRTF)
	}
	return nil
}
