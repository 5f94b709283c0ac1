package sim

import (
	"bytes"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"
)

// Dirty-data kinds, named as engine/dirty names them. The server sorts each
// request it rejects, and each valid but odd one it serves, into one of
// them, so Config.Defects can pick the requests to misbehave on.
const (
	KindEmpty            = "empty"           // an empty body, or only empty user text
	KindWhitespace       = "whitespace"      // a blank body, or only blank user text
	KindNoMessages       = "no_messages"     // messages missing or empty
	KindOverlong         = "overlong"        // a prompt beyond the context window or the body limit
	KindBadRole          = "bad_role"        // a message role no server knows
	KindHugeMaxTokens    = "huge_max_tokens" // max_tokens beyond what the context leaves
	KindNegativeMax      = "negative_max_tokens"
	KindUnknownModel     = "unknown_model"
	KindMalformedJSON    = "malformed_json"     // not JSON, or not a JSON object
	KindWrongContentType = "wrong_content_type" // a Content-Type other than application/json
	KindInvalidUTF8      = "invalid_utf8"
	KindDeepNesting      = "deep_nesting" // JSON nested deeper than MaxJSONDepth
	KindInvisible        = "invisible"    // zero-width characters or a BOM in a message: valid
	KindBidi             = "bidi"         // bidirectional controls in a message: valid
	KindControlChars     = "control_chars"
	KindEmojiCJK         = "emoji_cjk" // characters beyond the BMP: valid
	// The media kinds: refused media parts, sorted by why.
	KindTruncatedImage   = "truncated_image"    // an image that does not decode to its end
	KindMislabeledImage  = "mislabeled_image"   // image bytes of another format than declared
	KindZeroPixelImage   = "zero_pixel_image"   // an image header of no pixels
	KindOversizeImage    = "oversize_image"     // an image above MaxImageBytes
	KindBadBase64        = "bad_base64"         // a data URL that is not base64
	KindLyingAudioHeader = "lying_audio_header" // audio whose header claims more than it holds
)

// MaxJSONDepth is the deepest nesting of arrays and objects a body may
// have. A chat request needs 5 levels; the limit is checked by a linear
// scan before decoding, so a nesting bomb never reaches the decoder.
const MaxJSONDepth = 64

// DirtyKinds returns the kind names the server recognises, in a fixed order.
func DirtyKinds() []string {
	return []string{
		KindEmpty, KindWhitespace, KindNoMessages, KindOverlong, KindBadRole,
		KindHugeMaxTokens, KindNegativeMax, KindUnknownModel, KindMalformedJSON,
		KindWrongContentType, KindInvalidUTF8, KindDeepNesting,
		KindInvisible, KindBidi, KindControlChars, KindEmojiCJK,
		KindTruncatedImage, KindMislabeledImage, KindZeroPixelImage, KindOversizeImage, KindBadBase64, KindLyingAudioHeader,
	}
}

// checkContentType accepts an absent Content-Type (curl without -H sends
// none worth trusting) and any application/json, with or without charset.
func checkContentType(r *http.Request) *apiError {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return newAPIError(http.StatusUnsupportedMediaType, "", "unsupported Content-Type %s; expected application/json", quoteShort(ct)).
		as(KindWrongContentType)
}

// checkBody rejects, before any decoding, a body that is empty or blank,
// not UTF-8, or nested too deep.
func checkBody(body []byte) *apiError {
	switch {
	case len(body) == 0:
		return badRequest("", "invalid JSON body: the body is empty").as(KindEmpty)
	case len(bytes.TrimSpace(body)) == 0:
		return badRequest("", "invalid JSON body: the body is blank").as(KindWhitespace)
	case !utf8.Valid(body):
		return badRequest("", "the body is not valid UTF-8").as(KindInvalidUTF8)
	case jsonDepth(body) > MaxJSONDepth:
		return badRequest("", "invalid JSON body: nested deeper than %d levels", MaxJSONDepth).as(KindDeepNesting)
	}
	return nil
}

// jsonDepth is the deepest nesting of brackets and braces outside strings.
// It does not validate: the decoder does that, once the depth is safe.
func jsonDepth(body []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range body {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// oddKind names the first valid-but-odd kind found in the messages' text,
// "" for plain text. Such requests are served normally.
func oddKind(msgs []openai.ChatCompletionMessage) string {
	found := [4]bool{}
	for i := range msgs {
		text, _ := messageText(i, &msgs[i]) // validated already
		for _, r := range text {
			switch {
			case r == 0x200b, r == 0x200c, r == 0x200d, r == 0x2060, r == 0xfeff:
				found[0] = true
			case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
				found[1] = true
			case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f:
				found[2] = true
			case r > 0xffff:
				found[3] = true
			}
		}
	}
	// Emoji ZWJ sequences carry zero-width joiners, so astral runes decide
	// first; invisible text is the kind with nothing else odd in it.
	for _, i := range []int{3, 1, 2, 0} {
		if found[i] {
			return []string{KindInvisible, KindBidi, KindControlChars, KindEmojiCJK}[i]
		}
	}
	return ""
}

// blankKind tells an empty user text from a blank one.
func blankKind(texts []string) string {
	for _, t := range texts {
		if t != "" && strings.TrimSpace(t) == "" {
			return KindWhitespace
		}
	}
	return KindEmpty
}
