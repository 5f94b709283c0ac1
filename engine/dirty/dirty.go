// Package dirty turns normal chat requests into deliberately malformed
// ones, so a load test can check how a server answers bad input: a clean
// 4xx, a normal answer, or a crash, a hang or a 5xx. Each kind documents
// what it sends and what a healthy server answers. It knows no Lua.
package dirty

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine"
)

// Kind documents one malformed input: what it sends and what a healthy server answers.
type Kind struct {
	Name    string
	Sends   string
	Healthy string
}

// ErrUnknownKind is wrapped by Apply's error for a kind it does not know.
var ErrUnknownKind = errors.New("dirty: unknown kind")

// ErrNoEmbeddings is wrapped by Apply's error for an embeddings request:
// the kinds malform generation requests.
var ErrNoEmbeddings = errors.New("the kinds malform generation requests, not embeddings")

// mutator makes req dirty in place; rng is never nil.
type mutator func(req *engine.ChatRequest, rng *rand.Rand) error

// kind is a documented kind and the mutator that produces it.
type kind struct {
	Kind
	apply mutator
}

// registry holds every kind, sorted by name (TestRegistrySorted checks).
var registry = []kind{
	{Kind{"bad_base64", "an image whose data URL holds characters outside base64's alphabet and lacks its padding", "400 (invalid base64 image data)"}, badBase64},
	{Kind{"bad_role", `a user message whose role no server knows, such as "wizard"`, "400 (unknown role)"}, badRole},
	{Kind{"bidi", "bidirectional controls (RLO, LRO, PDF, RLE, LRE, isolates) around and inside the text", "200: served normally, it is valid Unicode"}, bidi},
	{Kind{"control_chars", `C0 controls (\x00, \a, \b, ESC sequences, \v, \f) and DEL mixed into the text`, "200: served normally, JSON-escaped controls are valid"}, controlChars},
	{Kind{"deep_nesting", fmt.Sprintf("a valid JSON body whose extra field nests %d arrays and objects deep", NestingDepth), "400 or 413 (nesting limit), quickly, without a crash"}, deepNesting},
	{Kind{"emoji_cjk", "astral-plane emoji (ZWJ sequences, flags, skin tones) and CJK Extension B characters in the text", "200: served normally, without mojibake"}, emojiCJK},
	{Kind{"empty", `a user message with content ""`, "400 (nothing to answer)"}, empty},
	{Kind{"huge_max_tokens", fmt.Sprintf("max_tokens %d", HugeMaxTokens), "400 (max_tokens beyond the context window)"}, hugeMaxTokens},
	{Kind{"invalid_utf8", "a JSON body whose message text holds bytes that are not UTF-8 (0xff 0xfe, a lone continuation byte, ...)", "400 (body is not valid UTF-8)"}, invalidUTF8},
	{Kind{"invisible", "zero-width space, non-joiner and joiner, word joiner and BOM mixed into the text", "200: served normally, it is valid Unicode"}, invisible},
	{Kind{"lying_audio_header", "a WAV file whose header claims ten times the samples it holds (an input_audio part, or a transcription's file)", "400 (unreadable audio), quickly, without waiting for the missing samples"}, lyingAudioHeader},
	{Kind{"malformed_json", "a broken JSON body: truncated, a trailing comma, or a raw line break inside a string", "400 (invalid JSON)"}, malformedJSON},
	{Kind{"mislabeled_image", "a PNG image sent as a data URL that says image/jpeg", "400 (image data does not match its type), or 200 from a server that sniffs the bytes"}, mislabeledImage},
	{Kind{"negative_max_tokens", "max_tokens -1", "400 (max_tokens must be positive)"}, negativeMaxTokens},
	{Kind{"no_messages", "messages: []", "400 (messages must not be empty)"}, noMessages},
	{Kind{"overlong", fmt.Sprintf("a user message of %d characters (about %dk tokens), beyond any context window", OverlongChars, OverlongChars/4000), "400 (prompt exceeds the context window) or 413, quickly"}, overlong},
	{Kind{"oversize_image", "a valid JPEG padded past 20 MB, the usual per-image limit", "400 or 413 (image too large), quickly"}, oversizeImage},
	{Kind{"truncated_image", "an image cut to half its bytes, its header intact", "400 (undecodable image)"}, truncatedImage},
	{Kind{"unknown_model", "a model name that no server has", "404 (model not found), or 400"}, unknownModel},
	{Kind{"whitespace", "a user message of spaces, tabs and newlines only", "400 (nothing to answer)"}, whitespace},
	{Kind{"wrong_content_type", "a valid JSON body with Content-Type text/plain", "415 (unsupported media type), or 400"}, wrongContentType},
	{Kind{"zero_pixel_image", "a PNG whose header says 0×0 pixels, with valid checksums", "400 (invalid image dimensions)"}, zeroPixelImage},
}

// speechKinds are the kinds a speech request can carry, by endpoint:
// speech breaks its input text (or its body, model or content type); a
// transcription, a multipart form, its audio, model, body or content
// type. The others would label a request dirty that went out clean.
var speechKinds = map[string]map[string]bool{
	engine.EndpointSpeech: {
		"bidi": true, "control_chars": true, "emoji_cjk": true, "empty": true, "invisible": true, "overlong": true,
		"whitespace": true, "unknown_model": true, "wrong_content_type": true, "deep_nesting": true,
	},
	engine.EndpointTranscriptions: {
		"lying_audio_header": true, "unknown_model": true, "wrong_content_type": true, "malformed_json": true,
	},
}

// Kinds returns every kind, sorted by name.
func Kinds() []Kind {
	out := make([]Kind, len(registry))
	for i, k := range registry {
		out[i] = k.Kind
	}
	return out
}

// Names returns every kind's name, sorted.
func Names() []string {
	out := make([]string, len(registry))
	for i, k := range registry {
		out[i] = k.Name
	}
	return out
}

// Valid reports whether name is a kind.
func Valid(name string) bool {
	_, ok := lookup(name)
	return ok
}

func lookup(name string) (kind, bool) {
	i, ok := slices.BinarySearchFunc(registry, name, func(k kind, n string) int { return strings.Compare(k.Name, n) })
	if !ok {
		return kind{}, false
	}
	return registry[i], true
}

// Apply turns req (a normal chat, completions, Responses or Messages
// request; embeddings have no kinds) into the malformed variant kind, in
// place; the raw kinds write the body in the shape of its endpoint. rng gives variety where a kind has it; nil picks
// a fixed seed. An unknown kind's error lists the valid ones. Apply is safe
// for concurrent use on distinct requests and distinct rngs.
func Apply(kind string, req *engine.ChatRequest, rng *rand.Rand) error {
	k, ok := lookup(kind)
	if !ok {
		return fmt.Errorf("%w %q (valid: %s)", ErrUnknownKind, kind, strings.Join(Names(), ", "))
	}
	if req == nil {
		return fmt.Errorf("dirty: %s: nil request", kind)
	}
	if req.Endpoint == engine.EndpointEmbeddings {
		return fmt.Errorf("dirty: %s: %w", kind, ErrNoEmbeddings)
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	if only := speechKinds[req.Endpoint]; only != nil && !only[kind] {
		return fmt.Errorf("dirty: %s: %w: a %s request carries no messages or max_tokens for it to break", kind, ErrNotForAPI, req.Endpoint)
	}
	if err := k.apply(req, rng); err != nil {
		return fmt.Errorf("dirty: %s: %w", kind, err)
	}
	return nil
}
