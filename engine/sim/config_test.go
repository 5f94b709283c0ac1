package sim

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error, "" for none
	}{
		{"zero", Config{}, ""},
		{"negative durations mean zero", Config{DecodeBase: -1, PrefillBase: -1, StopFraction: -1}, ""},
		{"negative batch", Config{MaxBatch: -1}, "max batch -1"},
		{"negative context", Config{MaxContext: -5}, "max context -5"},
		{"negative chunk", Config{TokensPerChunk: -2}, "tokens per chunk -2"},
		{"negative body", Config{MaxBodyBytes: -1}, "max body bytes"},
		{"negative min output", Config{MinOutputTokens: -1}, "min output tokens"},
		{"stop fraction above 1", Config{StopFraction: 1.5}, "stop fraction 1.5"},
		{"NaN interference", Config{PrefillInterference: math.NaN()}, "prefill interference NaN"},
		{"default max tokens beyond context", Config{MaxContext: 100, DefaultMaxTokens: 200}, "exceed the context window of 100"},
		{"default max tokens beyond default context", Config{DefaultMaxTokens: 40000}, "of 32768"},
		{"negative prefix cache disables it", Config{PrefixCacheTokens: -1}, ""},
		{"defects", Config{Defects: map[string]string{KindOverlong: "500", KindBidi: "hang", KindEmpty: "200"}}, ""},
		{"defect of an unknown kind", Config{Defects: map[string]string{"weird": "500"}}, `unknown dirty-data kind "weird"`},
		{"defect with an unknown behaviour", Config{Defects: map[string]string{KindBadRole: "explode"}}, `unknown defect behaviour "explode"`},
		{"defect with a non-error status", Config{Defects: map[string]string{KindBadRole: "302"}}, "unknown defect behaviour"},
		{"CPU per token", Config{CPUPerToken: time.Millisecond}, ""},
		{"negative CPU per token", Config{CPUPerToken: -time.Millisecond}, "CPU per token -1ms is negative"},
		{"media settings", Config{ImageTokens: ImageTokensLLaVA, MaxImages: 2, MaxImageBytes: 1 << 20, URLImageSide: 512, SpeechRTF: 1.5}, ""},
		{"unknown image formula", Config{ImageTokens: "clip"}, `image tokens "clip" is not a formula; expected one of qwen2vl, patch14, llava`},
		{"negative max images", Config{MaxImages: -1}, "max images -1"},
		{"negative max image bytes", Config{MaxImageBytes: -1}, "max image bytes -1"},
		{"negative URL image side", Config{URLImageSide: -1}, "URL image side -1"},
		{"negative speech RTF", Config{SpeechRTF: -2}, "speech real-time factor -2"},
		{"NaN speech RTF", Config{SpeechRTF: math.NaN()}, "speech real-time factor NaN"},
		{"CPU per token in the fixed-delay mode", Config{CPUPerToken: time.Millisecond, FixedTTFT: time.Second, FixedITL: time.Millisecond}, "delays are exact"},
		{"traces over http", Config{OTLPTracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, ""},
		{"traces to host:port", Config{OTLPTracesEndpoint: "127.0.0.1:4317", OTLPTracesProtocol: ProtocolGRPC}, ""},
		{"unknown traces protocol", Config{OTLPTracesEndpoint: "127.0.0.1:4318", OTLPTracesProtocol: "http/json"}, `unsupported OTLP protocol "http/json"`},
		{"traces endpoint scheme", Config{OTLPTracesEndpoint: "ftp://127.0.0.1:4318"}, `scheme "ftp"`},
		{"traces endpoint without host", Config{OTLPTracesEndpoint: "http:///v1/traces"}, "has no host"},
		{"gRPC endpoint with a path", Config{OTLPTracesEndpoint: "http://127.0.0.1:4317/v1/traces", OTLPTracesProtocol: ProtocolGRPC}, "a gRPC endpoint has no path"},
		{"speculative decoding", Config{SpecTokens: 3, SpecAccept: 0.6}, ""},
		{"negative spec tokens", Config{SpecTokens: -1}, "spec tokens -1"},
		{"too many spec tokens", Config{SpecTokens: MaxSpecTokens + 1}, "spec tokens 33"},
		{"spec accept above 1", Config{SpecTokens: 2, SpecAccept: 1.5}, "spec accept 1.5"},
		{"spec accept NaN", Config{SpecTokens: 2, SpecAccept: math.NaN()}, "spec accept NaN"},
		{"spec accept alone", Config{SpecAccept: 0.5}, "needs spec tokens"},
		{"spec with tokens per chunk", Config{SpecTokens: 2, TokensPerChunk: 4}, "no tokens per chunk"},
		{"spec in the fixed-delay mode", Config{SpecTokens: 2, FixedTTFT: time.Second, FixedITL: time.Millisecond}, "no decode steps"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	got := Config{
		MaxBatch: -3, DecodeBase: -1, DecodePerSeq: 2 * time.Millisecond, StopFraction: 7,
		PrefillInterference: -0.5, MaxContext: 100, DefaultMaxTokens: 500,
		Defects: map[string]string{KindOverlong: "500", "nonsense": "hang", KindBidi: "teapot"},
	}.withDefaults()
	want := Config{
		Model: DefaultModel, MaxBatch: DefaultMaxBatch, PrefillBase: DefaultPrefillBase,
		PrefillPerToken: DefaultPrefillPerToken, DecodeBase: 0, DecodePerSeq: 2 * time.Millisecond,
		PrefillInterference: 0, MaxContext: 100, DefaultMaxTokens: 100,
		MinOutputTokens: DefaultMinOutputTokens, StopFraction: DefaultStopFraction,
		TokensPerChunk: DefaultTokensPerChunk, MaxBodyBytes: DefaultMaxBodyBytes,
		PrefixCacheTokens: DefaultPrefixCacheTokens, Defects: map[string]string{KindOverlong: "500"},
		ImageTokens: ImageTokensQwen2VL, MaxImages: DefaultMaxImages, MaxImageBytes: DefaultMaxImageBytes,
		URLImageSide: DefaultURLImageSide, SpeechRTF: DefaultSpeechRTF,
		OTLPTracesProtocol: ProtocolHTTPProtobuf, SpecAccept: DefaultSpecAccept,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("withDefaults() =\n%+v\nwant\n%+v", got, want)
	}
}
