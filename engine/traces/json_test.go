package traces

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// jsonExportOf wraps span members in an OTLP/JSON export request.
func jsonExportOf(spans ...string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"vllm"}}]},` +
		`"scopeSpans":[{"scope":{"name":"vllm.llm_engine"},"spans":[` + strings.Join(spans, ",") + `]}]}]}`
}

func TestUnmarshalJSON(t *testing.T) {
	const ids = `"traceId":"4BF92F3577B34DA6A3CE929D0E0E4736","spanId":"00f067aa0ba902b7","name":"llm_request","kind":2,"startTimeUnixNano":"1718000000000000000"`
	tests := map[string]struct {
		body                    string
		spans, rejected, malfor int
		want                    func(*engine.ServerSpan)
	}{
		"int64 as string and number": {
			body: jsonExportOf(`{` + ids + `,"attributes":[` +
				`{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"12"}},` +
				`{"key":"gen_ai.usage.completion_tokens","value":{"intValue":34}},` +
				`{"key":"gen_ai.latency.e2e","value":{"doubleValue":1.5}},` +
				`{"key":"gen_ai.latency.time_in_queue","value":{"doubleValue":"0.25"}},` +
				`{"key":"gen_ai.request.id","value":{"stringValue":"cmpl-9"}}]}`),
			spans: 1,
			want: func(s *engine.ServerSpan) {
				s.PromptTokens, s.CompletionTokens, s.E2E, s.Queue, s.RequestID = 12, 34, 1500*time.Millisecond, 250*time.Millisecond, "cmpl-9"
			},
		},
		"bad numbers are malformed attributes": {
			body: jsonExportOf(`{` + ids + `,"attributes":[` +
				`{"key":"gen_ai.usage.prompt_tokens","value":{"intValue":"twelve"}},` +
				`{"key":"gen_ai.latency.e2e","value":{"doubleValue":"NaN"}},` +
				`{"key":"gen_ai.latency.time_to_first_token","value":{"arrayValue":{"values":[]}}}]}`),
			spans: 1, malfor: 1,
			want: func(*engine.ServerSpan) {},
		},
		"base64 ids are rejected": {
			body:     jsonExportOf(`{"traceId":"S/kvNXezTaajzpKdDg5HNg==","spanId":"APBnqgupArc=","attributes":[{"key":"gen_ai.latency.e2e","value":{"doubleValue":1}}]}`),
			rejected: 1,
		},
		"unknown members ignored": {
			body:  `{"resourceSpans":[{"schemaUrl":"x","scopeSpans":[{"spans":[{` + ids + `,"events":[],"attributes":[{"key":"gen_ai.latency.e2e","value":{"doubleValue":2}}]}]}]}],"extra":1}`,
			spans: 1,
			want:  func(s *engine.ServerSpan) { s.Service, s.E2E = "", 2*time.Second },
		},
		"empty": {body: `{}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := unmarshalJSON([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var b batch
			decodeExport(req, &b)
			if len(b.spans) != tt.spans || b.rejected != tt.rejected || b.malformed != tt.malfor {
				t.Fatalf("spans %d rejected %d malformed %d; want %d %d %d", len(b.spans), b.rejected, b.malformed, tt.spans, tt.rejected, tt.malfor)
			}
			if tt.spans == 0 {
				return
			}
			want := absent()
			tt.want(&want)
			if got := b.spans[0]; got.Server != want || got.TraceID.String() != traceAHex || got.SpanID.String() != spanAHex {
				t.Errorf("span = %+v\nwant   %+v (ids %s %s)", got.Server, want, got.TraceID, got.SpanID)
			}
		})
	}
}

func TestUnmarshalJSONErrors(t *testing.T) {
	for _, body := range []string{``, `{`, `[]`, `{"resourceSpans":{}}`, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":7}]}]}]}`} {
		if _, err := unmarshalJSON([]byte(body)); err == nil {
			t.Errorf("unmarshalJSON(%q) = nil error", body)
		}
	}
}
