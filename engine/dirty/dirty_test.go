package dirty

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"mime"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

const prompt = "[req_7] 什么是机器学习？"

func sample() *engine.ChatRequest {
	return &engine.ChatRequest{Model: "m", MaxTokens: 200, IgnoreEOS: true, MinTokens: 200,
		Messages: []engine.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: prompt}}}
}

// user is the content of the last message, where the kinds write.
func user(req *engine.ChatRequest) string { return req.Messages[len(req.Messages)-1].Content }

// without removes every rune in drop from s.
func without(s string, drop func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if drop(r) {
			return -1
		}
		return r
	}, s)
}

func isInvisible(r rune) bool { return slices.Contains(invisibles, r) }
func isBidi(r rune) bool      { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }
func isControl(r rune) bool   { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f }

// properties check what makes each kind dirty; "" means the request has it.
var properties = map[string]func(req *engine.ChatRequest) string{
	"empty": func(req *engine.ChatRequest) string { return expect(user(req) == "", "user content %q", user(req)) },
	"whitespace": func(req *engine.ChatRequest) string {
		c := user(req)
		return expect(c != "" && strings.Trim(c, " \t\n\r") == "", "user content %q", c)
	},
	"no_messages": func(req *engine.ChatRequest) string {
		return expect(req.Messages != nil && len(req.Messages) == 0, "messages %#v", req.Messages)
	},
	"overlong": func(req *engine.ChatRequest) string {
		c := user(req)
		return expect(len(c) >= OverlongChars && strings.HasPrefix(c, prompt), "user content of %d bytes", len(c))
	},
	"invisible": func(req *engine.ChatRequest) string {
		c := user(req)
		return expect(strings.HasPrefix(c, "\ufeff") && strings.ContainsRune(c, zwsp) &&
			without(c, isInvisible) == prompt && utf8.ValidString(c), "user content %+q", c)
	},
	"bidi": func(req *engine.ChatRequest) string {
		c := user(req)
		return expect(strings.Contains(c, rlo) && strings.Contains(without(c, isBidi), prompt) &&
			!strings.ContainsFunc(c, isInvisible) && utf8.ValidString(c), "user content %+q", c)
	},
	"control_chars": func(req *engine.ChatRequest) string {
		c := user(req)
		return expect(strings.Contains(c, "\x00") && strings.Contains(c, "\x1b") && strings.Contains(c, "\x7f") &&
			without(strings.NewReplacer("\x1b[31m", "", "\x1b[2J", "", "\x1b[0m", "").Replace(c), isControl) == prompt &&
			utf8.ValidString(c), "user content %+q", c)
	},
	"emoji_cjk": func(req *engine.ChatRequest) string {
		c := user(req)
		extB := strings.ContainsFunc(c, func(r rune) bool { return r >= 0x20000 && r <= 0x2a6df })
		flag := strings.ContainsFunc(c, func(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff })
		return expect(extB && flag && strings.ContainsRune(c, zwj) && utf8.ValidString(c), "user content %+q", c)
	},
	"bad_role": func(req *engine.ChatRequest) string {
		role := req.Messages[len(req.Messages)-1].Role
		return expect(!slices.Contains([]string{"system", "user", "assistant", "tool", "developer", "function"}, role) &&
			user(req) == prompt, "role %q", role)
	},
	"huge_max_tokens": func(req *engine.ChatRequest) string {
		return expect(req.MaxTokens == 1_000_000_000 && !req.IgnoreEOS && req.MinTokens == 0, "max_tokens %d", req.MaxTokens)
	},
	"negative_max_tokens": func(req *engine.ChatRequest) string {
		return expect(req.MaxTokens == -1 && !req.IgnoreEOS && req.MinTokens == 0, "max_tokens %d", req.MaxTokens)
	},
	"unknown_model": func(req *engine.ChatRequest) string {
		return expect(strings.HasPrefix(req.Model, "llmload-no-such-model-") && len(req.Model) > 22, "model %q", req.Model)
	},
	"malformed_json": func(req *engine.ChatRequest) string {
		return expect(!json.Valid(req.Raw) && utf8.Valid(req.Raw) && routable(req.Raw), "raw %q", req.Raw)
	},
	"wrong_content_type": func(req *engine.ChatRequest) string {
		mt, _, err := mime.ParseMediaType(req.ContentType)
		return expect(err == nil && mt == "text/plain" && req.Raw == nil, "content type %q", req.ContentType)
	},
	"invalid_utf8": func(req *engine.ChatRequest) string {
		r := req.Raw
		return expect(!utf8.Valid(r) && bytes.Contains(r, []byte("\xff\xfe")) && routable(r) &&
			json.Valid(bytes.ToValidUTF8(r, []byte("?"))), "raw %q", r)
	},
	"truncated_image": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartImage)
		return expect(it != nil && media.CheckWhole(it.Format, it.Data()) != nil, "image %v", it)
	},
	"mislabeled_image": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartImage)
		return expect(it != nil && it.MIME == "image/jpeg" && media.Sniff(it.Data()) == "png", "image %v", it)
	},
	"zero_pixel_image": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartImage)
		_, err := media.Probe(it.Data())
		return expect(it != nil && err != nil && media.Sniff(it.Data()) == "png", "image %v: %v", it, err)
	},
	"oversize_image": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartImage)
		_, err := media.New("x", it.Data(), media.DefaultMaxBytes)
		return expect(it.Size() > media.DefaultMaxBytes && err != nil && strings.Contains(err.Error(), "larger"), "%d bytes: %v", it.Size(), err)
	},
	"bad_base64": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartImage)
		_, err := base64.StdEncoding.DecodeString(string(it.Base64()))
		return expect(err != nil, "base64 decodes")
	},
	"lying_audio_header": func(req *engine.ChatRequest) string {
		it := lastMedia(req, engine.PartAudio)
		_, err := media.Probe(it.Data())
		return expect(err != nil && strings.Contains(err.Error(), "data chunk says"), "audio: %v", err)
	},
	"deep_nesting": func(req *engine.ChatRequest) string {
		depth, err := nestedValid(req.Raw)
		return expect(err == nil && depth >= 100_000 && routable(req.Raw), "depth %d, %v", depth, err)
	},
}

// lastMedia is the item of the last part of type typ in the last user
// message, nil when there is none; a text part must remain beside it.
func lastMedia(req *engine.ChatRequest, typ string) *media.Item {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var it *media.Item
		text := false
		for _, p := range m.Parts {
			if p.Type == typ {
				it = p.Media
			}
			text = text || p.Type == engine.PartText && p.Text != ""
		}
		if !text {
			return nil
		}
		return it
	}
	return nil
}

func expect(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	s := fmt.Sprintf(format, args...)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// routable reports whether a raw body still names the model and the stream.
func routable(raw []byte) bool {
	return bytes.HasPrefix(raw, []byte(`{"model":"m","stream":true,`))
}

func TestApplyMakesDirty(t *testing.T) {
	if got, want := len(properties), len(Names()); got != want {
		t.Fatalf("%d properties for %d kinds", got, want)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			check := properties[name]
			if check == nil {
				t.Fatalf("no property for kind %s", name)
			}
			for seed := range uint64(12) {
				req := sample()
				if err := Apply(name, req, rand.New(rand.NewPCG(seed, 7))); err != nil {
					t.Fatal(err)
				}
				if msg := check(req); msg != "" {
					t.Errorf("seed %d: %s", seed, msg)
				}
			}
		})
	}
}

// TestApplyLeavesOtherFields checks that a kind changes only what it is about.
func TestApplyLeavesOtherFields(t *testing.T) {
	for _, name := range Names() {
		req := sample()
		shared := req.Messages
		if err := Apply(name, req, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := shared[1].Content, prompt; got != want {
			t.Errorf("%s: changed the caller's message slice: %q", name, got)
		}
		if len(req.Messages) > 0 && !reflect.DeepEqual(req.Messages[0], engine.Message{Role: "system", Content: "Be brief."}) {
			t.Errorf("%s: changed the system message: %+v", name, req.Messages[0])
		}
		if name != "unknown_model" && req.Model != "m" {
			t.Errorf("%s: model = %q", name, req.Model)
		}
		if name != "wrong_content_type" && req.ContentType != "" {
			t.Errorf("%s: content type = %q", name, req.ContentType)
		}
	}
}

func TestApplyVaries(t *testing.T) {
	for _, name := range []string{"whitespace", "invisible", "bidi", "emoji_cjk", "unknown_model", "malformed_json", "invalid_utf8", "deep_nesting"} {
		seen := map[string]bool{}
		for seed := range uint64(20) {
			req := sample()
			if err := Apply(name, req, rand.New(rand.NewPCG(seed, 1))); err != nil {
				t.Fatal(err)
			}
			seen[fmt.Sprintf("%s|%s|%s", req.Model, user(req), req.Raw)] = true
		}
		if got := len(seen); got < 3 {
			t.Errorf("%s: %d distinct requests from 20 seeds, want variety", name, got)
		}
	}
}

func TestApplyUnknownKind(t *testing.T) {
	err := Apply("gibberish", sample(), nil)
	if !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("error = %v, want ErrUnknownKind", err)
	}
	for _, name := range Names() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %s", err, name)
		}
	}
	if got, want := Valid("gibberish"), false; got != want {
		t.Errorf("Valid(gibberish) = %t", got)
	}
}

func TestApplyNilRequest(t *testing.T) {
	if err := Apply("empty", nil, nil); err == nil || !strings.Contains(err.Error(), "nil request") {
		t.Errorf("error = %v, want a nil request error", err)
	}
}

func TestApplyWithoutUserMessage(t *testing.T) {
	for _, name := range []string{"empty", "whitespace", "invisible", "bad_role", "invalid_utf8"} {
		req := &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "system", Content: "s"}}}
		if err := Apply(name, req, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := len(req.Messages), 2; got != want && req.Raw == nil {
			t.Errorf("%s: %d messages, want a user message appended", name, got)
		}
	}
}

func TestApplyCompletions(t *testing.T) {
	tests := map[string]struct {
		check string // a fragment of the prompt or body
		err   bool
	}{
		"empty":          {},
		"invisible":      {check: "\ufeff"},
		"control_chars":  {check: "\x00"},
		"overlong":       {check: "Once upon"},
		"invalid_utf8":   {check: `"prompt":"`},
		"malformed_json": {check: `"prompt":"`},
		"no_messages":    {err: true},
		"bad_role":       {err: true},
	}
	for name, tt := range tests {
		req := &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Model: "m", Prompt: "Once upon"}
		err := Apply(name, req, rand.New(rand.NewPCG(2, 2)))
		if got, want := err != nil, tt.err; got != want {
			t.Errorf("%s: error = %v, want error %t", name, err, want)
			continue
		}
		if got := req.Prompt + string(req.Raw); !strings.Contains(got, tt.check) {
			t.Errorf("%s: prompt and body %.80q lack %q", name, got, tt.check)
		}
		if req.Messages != nil {
			t.Errorf("%s: messages %v added to a completion", name, req.Messages)
		}
	}
}

func TestKindsDocumented(t *testing.T) {
	kinds := Kinds()
	names := Names()
	if got, want := len(kinds), 22; got != want {
		t.Errorf("%d kinds, want %d", got, want)
	}
	for i, k := range kinds {
		if got, want := k.Name, names[i]; got != want {
			t.Errorf("Kinds()[%d] = %s, Names()[%d] = %s", i, got, i, want)
		}
		if i > 0 && kinds[i-1].Name >= k.Name {
			t.Errorf("kinds not sorted: %s before %s", kinds[i-1].Name, k.Name)
		}
		if k.Sends == "" || k.Healthy == "" || !Valid(k.Name) {
			t.Errorf("kind %+v undocumented or invalid", k)
		}
		status := strings.Fields(k.Healthy)[0]
		if !strings.HasPrefix(status, "200") && !strings.HasPrefix(status, "4") {
			t.Errorf("%s: Healthy %q does not start with a status", k.Name, k.Healthy)
		}
	}
	for _, accepted := range []string{"invisible", "bidi", "control_chars", "emoji_cjk"} {
		k, _ := lookup(accepted)
		if !strings.HasPrefix(k.Healthy, "200") {
			t.Errorf("%s: Healthy = %q, want 200", accepted, k.Healthy)
		}
	}
}

// nestedValid checks a deep_nesting body without Go's decoder, which
// refuses anything nested over 10,000 deep: the body with its "extra"
// value replaced by 0 must be valid JSON, and the value must be a
// well-formed nest of arrays and {"a":...} objects around 0.
func nestedValid(raw []byte) (int, error) {
	i := bytes.Index(raw, []byte(`,"extra":`))
	if i < 0 || !bytes.HasSuffix(raw, []byte("}")) {
		return 0, errors.New(`no "extra" field`)
	}
	nest := raw[i+len(`,"extra":`) : len(raw)-1]
	outer := append(append(slices.Clone(raw[:i]), `,"extra":0`...), '}')
	if !json.Valid(outer) {
		return 0, fmt.Errorf("body around the nest is invalid: %.200s", outer)
	}
	return nestDepth(nest)
}

func nestDepth(nest []byte) (int, error) {
	var stack []byte
	deepest := 0
	for len(nest) > 0 && nest[0] != '0' {
		switch {
		case nest[0] == '[':
			stack, nest = append(stack, ']'), nest[1:]
		case bytes.HasPrefix(nest, []byte(`{"a":`)):
			stack, nest = append(stack, '}'), nest[len(`{"a":`):]
		default:
			return 0, fmt.Errorf("unexpected %q", nest[0])
		}
		deepest = max(deepest, len(stack))
	}
	if len(nest) == 0 {
		return 0, errors.New("no innermost value")
	}
	nest = nest[1:]
	for len(stack) > 0 {
		if len(nest) == 0 || nest[0] != stack[len(stack)-1] {
			return 0, errors.New("unbalanced nest")
		}
		stack, nest = stack[:len(stack)-1], nest[1:]
	}
	if len(nest) != 0 {
		return 0, fmt.Errorf("%d bytes after the nest", len(nest))
	}
	return deepest, nil
}

func TestNestedValidRejects(t *testing.T) {
	tests := map[string]string{"unbalanced": "[[0]", "mixed close": `[{"a":0]}`, "no value": "[[]]", "trailing": "[0]]"}
	for name, nest := range tests {
		if _, err := nestDepth([]byte(nest)); err == nil {
			t.Errorf("%s: nestDepth(%s) accepted", name, nest)
		}
	}
	if got, err := nestDepth([]byte(`[{"a":[0]}]`)); got != 3 || err != nil {
		t.Errorf(`nestDepth([{"a":[0]}]) = %d, %v, want 3`, got, err)
	}
}

func BenchmarkApply(b *testing.B) {
	for _, name := range []string{"invisible", "malformed_json", "invalid_utf8", "overlong", "deep_nesting"} {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			b.ReportAllocs()
			for b.Loop() {
				if err := Apply(name, sample(), rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSpeechKinds: a speech request takes the kinds that break its input
// text, a transcription those that break its file, model or body; the
// others are not for the API, so no clean request is labelled dirty.
func TestSpeechKinds(t *testing.T) {
	for _, name := range Names() {
		for _, endpoint := range []string{engine.EndpointSpeech, engine.EndpointTranscriptions} {
			req := &engine.ChatRequest{Endpoint: endpoint, Model: "m", Prompt: "hello there"}
			before := *req
			err := Apply(name, req, nil)
			allowed := speechKinds[endpoint][name]
			switch {
			case allowed && err != nil:
				t.Errorf("%s on %s: %v", name, endpoint, err)
			case !allowed && !errors.Is(err, ErrNotForAPI):
				t.Errorf("%s on %s: error %v, want ErrNotForAPI", name, endpoint, err)
			case allowed && reflect.DeepEqual(*req, before):
				t.Errorf("%s on %s left the request as it was", name, endpoint)
			}
		}
	}
	req := &engine.ChatRequest{Endpoint: engine.EndpointSpeech, Prompt: "hi"}
	if err := Apply("empty", req, nil); err != nil || req.Prompt != "" || req.Messages != nil {
		t.Errorf("empty on speech: %v, input %q, messages %v", err, req.Prompt, req.Messages)
	}
}
