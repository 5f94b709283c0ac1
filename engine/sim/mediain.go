package sim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/llmload/llmload/engine/media"
)

// The formulas of Config.ImageTokens.
const (
	// ImageTokensQwen2VL is Qwen2-VL's smart resize: each side rounded to
	// a multiple of 28 px, the area kept within 56×56 and 28×28×1280
	// pixels, then one token per 28×28 block (14-px patches merged 2×2).
	ImageTokensQwen2VL = "qwen2vl"
	// ImageTokensPatch14 is one token per 14×14 patch, unmerged, the
	// image first shrunk to Qwen2-VL's largest area.
	ImageTokensPatch14 = "patch14"
	// ImageTokensLLaVA is LLaVA-1.5's fixed 576 tokens (24×24 patches of
	// its 336-px input), whatever the image's size.
	ImageTokensLLaVA = "llava"
)

// ImageTokenFormulas names the formulas Config.ImageTokens accepts.
func ImageTokenFormulas() []string {
	return []string{ImageTokensQwen2VL, ImageTokensPatch14, ImageTokensLLaVA}
}

// Media counting constants, as the models they imitate count.
const (
	// AudioTokensPerSecond is the prompt tokens of a second of audio:
	// Whisper's encoder makes 50 frames a second, pooled 2:1 by
	// Qwen2-Audio and its kin.
	AudioTokensPerSecond = 25
	// VideoFPS is the frames sampled a second of video, as vLLM's
	// Qwen2-VL processor samples them by default.
	VideoFPS = 2
	// VideoMaxFrames caps the frames sampled from one video.
	VideoMaxFrames = 32
	// VideoFrameSide is the side of the square image each frame counts as.
	VideoFrameSide = 448
	// DefaultVideoSeconds is the length of a video whose header does not
	// say (a URL, or an mp4 whose moov box comes after its data).
	DefaultVideoSeconds = 10
)

// Qwen2-VL's smart-resize bounds.
const (
	qwenFactor    = 28
	qwenMinPixels = 56 * 56
	qwenMaxPixels = 28 * 28 * 1280
	llavaTokens   = 576
)

// imageTokens counts an image of w×h pixels by formula.
func imageTokens(formula string, w, h int) int {
	switch formula {
	case ImageTokensLLaVA:
		return llavaTokens
	case ImageTokensPatch14:
		fw, fh := float64(w), float64(h)
		if fw*fh > qwenMaxPixels {
			beta := math.Sqrt(fw * fh / qwenMaxPixels)
			fw, fh = math.Max(1, math.Floor(fw/beta)), math.Max(1, math.Floor(fh/beta))
		}
		return int(math.Ceil(fw/14) * math.Ceil(fh/14))
	}
	rh, rw := smartResize(h, w)
	return (rh / qwenFactor) * (rw / qwenFactor)
}

// smartResize is Qwen2-VL's: both sides multiples of 28, the area
// within [min, max] pixels, the aspect ratio nearly kept.
func smartResize(h, w int) (int, int) {
	fh, fw, f := float64(h), float64(w), float64(qwenFactor)
	rh := math.Max(f, math.RoundToEven(fh/f)*f)
	rw := math.Max(f, math.RoundToEven(fw/f)*f)
	switch {
	case rh*rw > qwenMaxPixels:
		beta := math.Sqrt(fh * fw / qwenMaxPixels)
		rh = math.Max(f, math.Floor(fh/beta/f)*f)
		rw = math.Max(f, math.Floor(fw/beta/f)*f)
	case rh*rw < qwenMinPixels:
		beta := math.Sqrt(qwenMinPixels / (fh * fw))
		rh, rw = math.Ceil(fh*beta/f)*f, math.Ceil(fw*beta/f)*f
	}
	return int(rh), int(rw)
}

// audioTokens counts seconds of audio.
func audioTokens(seconds float64) int {
	return int(math.Ceil(seconds * AudioTokensPerSecond))
}

// videoTokens counts a video of seconds (0: DefaultVideoSeconds) by
// formula: its sampled frames, each a square image.
func videoTokens(formula string, seconds float64) int {
	if !(seconds > 0) {
		seconds = DefaultVideoSeconds
	}
	frames := min(VideoMaxFrames, max(1, int(math.Ceil(seconds*VideoFPS))))
	return frames * imageTokens(formula, VideoFrameSide, VideoFrameSide)
}

// mediaCount is what a request's media parts add to its prompt, checked
// as a vision or speech server checks them. Not safe for concurrent use.
type mediaCount struct {
	images, audios, videos int
	audioSeconds           float64
	tokens                 int
	// print fingerprints the items, so that requests differing only in
	// their images get different answers.
	print uint64
}

// formatOfMIME maps MIME types, aliases included, to formats.
var formatOfMIME = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
	"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/vnd.wave": "wav",
	"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/flac": "flac", "audio/ogg": "ogg",
	"video/mp4": "mp4", "video/webm": "webm",
}

// image counts an image sent as a URL: an http(s) one is never fetched
// and counts as a URLImageSide square; a data URL is decoded and probed.
func (m *mediaCount) image(cfg *Config, at where, url string) *apiError {
	if aerr := m.countImage(cfg, at); aerr != nil {
		return aerr
	}
	if isHTTP(url) {
		m.tokens += imageTokens(cfg.ImageTokens, cfg.URLImageSide, cfg.URLImageSide)
		m.mix(url)
		return nil
	}
	mime, b64, aerr := splitDataURL(at, url)
	if aerr != nil {
		return aerr
	}
	return m.decodeImage(cfg, at, mime, b64)
}

// countImage counts one more image, refusing one beyond MaxImages.
func (m *mediaCount) countImage(cfg *Config, at where) *apiError {
	if m.images++; m.images > cfg.MaxImages {
		return badRequest(at.param, "%s: at most %d images per request", at, cfg.MaxImages)
	}
	return nil
}

// imageData counts an image sent as base64 with its MIME type.
func (m *mediaCount) imageData(cfg *Config, at where, mime, b64 string) *apiError {
	if aerr := m.countImage(cfg, at); aerr != nil {
		return aerr
	}
	return m.decodeImage(cfg, at, mime, b64)
}

// decodeImage adds the tokens of a base64 image.
func (m *mediaCount) decodeImage(cfg *Config, at where, mime, b64 string) *apiError {
	info, aerr := decodeItem(cfg, at, media.Image, formatOfMIME[strings.ToLower(mime)], mime, b64)
	if aerr != nil {
		return aerr
	}
	m.tokens += imageTokens(cfg.ImageTokens, info.Width, info.Height)
	m.mix(b64)
	return nil
}

// audio counts base64 audio of format (wav or mp3, as OpenAI's
// input_audio takes).
func (m *mediaCount) audio(cfg *Config, at where, format, b64 string) *apiError {
	if format != "wav" && format != "mp3" {
		return badRequest(at.param, "%s: format %s is not supported; expected wav or mp3", at, quoteShort(format))
	}
	info, aerr := decodeItem(cfg, at, media.Audio, format, format, b64)
	if aerr != nil {
		return aerr
	}
	m.audios++
	m.audioSeconds += info.Seconds
	m.tokens += audioTokens(info.Seconds)
	m.mix(b64)
	return nil
}

// video counts a video URL: an http(s) one lasts DefaultVideoSeconds, a
// data URL what its mp4 header says.
func (m *mediaCount) video(cfg *Config, at where, url string) *apiError {
	m.videos++
	if isHTTP(url) {
		m.tokens += videoTokens(cfg.ImageTokens, 0)
		m.mix(url)
		return nil
	}
	mime, b64, aerr := splitDataURL(at, url)
	if aerr != nil {
		return aerr
	}
	info, aerr := decodeItem(cfg, at, media.Video, formatOfMIME[strings.ToLower(mime)], mime, b64)
	if aerr != nil {
		return aerr
	}
	m.tokens += videoTokens(cfg.ImageTokens, info.Seconds)
	m.mix(b64)
	return nil
}

// mix adds an item to the fingerprint: its length and last bytes, which
// differ between items without hashing megabytes.
func (m *mediaCount) mix(s string) {
	h := fnv.New64a()
	fmt.Fprint(h, m.print, len(s), s[max(0, len(s)-256):])
	m.print = h.Sum64()
}

func isHTTP(url string) bool {
	return strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "http://")
}

// splitDataURL splits "data:<mime>;base64,<data>".
func splitDataURL(at where, url string) (mime, b64 string, aerr *apiError) {
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return "", "", badRequest(at.param, "%s: the URL must be http(s) or a base64 data URL, got %s", at, quoteShort(url))
	}
	head, data, ok := strings.Cut(rest, ",")
	mime, enc, _ := strings.Cut(head, ";")
	if !ok || enc != "base64" {
		return "", "", badRequest(at.param, "%s: a data URL must be data:<type>;base64,<data>", at)
	}
	return mime, data, nil
}

// decodeItem decodes base64 data declared as format (label: how the
// request named it) and checks it is a whole item of kind within
// MaxImageBytes: bad base64, a size beyond the bound, bytes of another
// format than declared, an unreadable or truncated header are each a 400
// saying so.
func decodeItem(cfg *Config, at where, kind, format, label, b64 string) (media.Info, *apiError) {
	if media.KindOf(format) != kind {
		return media.Info{}, badRequest(at.param, "%s: %s is not a supported %s format; expected %s", at, quoteShort(label), kind, supported(kind))
	}
	if n := base64.StdEncoding.DecodedLen(len(b64)); n > cfg.MaxImageBytes+3 {
		return media.Info{}, tooLarge(at, kind, int64(n), cfg.MaxImageBytes)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return media.Info{}, badRequest(at.param, "%s: invalid base64: %v", at, err).as(KindBadBase64)
	}
	if len(data) > cfg.MaxImageBytes {
		return media.Info{}, tooLarge(at, kind, int64(len(data)), cfg.MaxImageBytes)
	}
	return probeItem(at, kind, format, label, data)
}

// probeItem checks data is a whole item of kind in format ("" for any).
func probeItem(at where, kind, format, label string, data []byte) (media.Info, *apiError) {
	sniffed := media.Sniff(data)
	switch {
	case sniffed == "":
		return media.Info{}, badRequest(at.param, "%s: the data is not %s %s file", at, article(kind), kind)
	case format != "" && sniffed != format:
		return media.Info{}, badRequest(at.param, "%s: declared %s but the data is %s", at, quoteShort(label), sniffed).as(KindMislabeledImage)
	case media.KindOf(sniffed) != kind:
		return media.Info{}, badRequest(at.param, "%s: the data is %s, not %s %s", at, sniffed, article(kind), kind)
	}
	info, err := media.Probe(data)
	if err == nil {
		err = media.CheckWhole(info.Format, data)
	}
	if err != nil {
		return info, badRequest(at.param, "%s: cannot decode the %s: %v", at, kind, err).as(undecodableKind(kind, err))
	}
	return info, nil
}

// undecodableKind sorts an item that does not decode into its dirty kind.
func undecodableKind(kind string, err error) string {
	switch {
	case kind == media.Audio:
		return KindLyingAudioHeader
	case kind != media.Image:
		return ""
	case strings.Contains(err.Error(), "dimension") || strings.Contains(err.Error(), "pixels"):
		return KindZeroPixelImage
	}
	return KindTruncatedImage
}

func tooLarge(at where, kind string, n int64, limit int) *apiError {
	e := badRequest(at.param, "%s: the %s is %s, above the limit of %s", at, kind, media.Bytes(n), media.Bytes(int64(limit)))
	if kind == media.Image {
		e = e.as(KindOversizeImage)
	}
	return e
}

// supported lists the formats of kind the simulator decodes.
func supported(kind string) string {
	switch kind {
	case media.Image:
		return "png, jpeg, gif or webp"
	case media.Audio:
		return "wav, mp3, flac or ogg"
	}
	return "mp4 or webm"
}

func article(kind string) string {
	if kind == media.Image || kind == media.Audio {
		return "an"
	}
	return "a"
}

// where names a media part in errors: its field path and its type, as
// in "messages[0].content[1]: image_url".
type where struct{ param, part string }

func (w where) String() string { return w.param + ": " + w.part }

// The chat content part types of media beyond go-openai's image_url.
const (
	partInputAudio openai.ChatMessagePartType = "input_audio"
	partVideoURL   openai.ChatMessagePartType = "video_url"
)

// mediaPlaceholder is the part a translated message carries for each of
// its media items: it makes the message non-blank, and adds no text.
var mediaPlaceholder = openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL}

// chatPart is a chat content part with the media fields go-openai's
// ChatMessagePart lacks.
type chatPart struct {
	Type     string `json:"type"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
	InputAudio *inputAudio `json:"input_audio"`
	VideoURL   *struct {
		URL string `json:"url"`
	} `json:"video_url"`
}

// inputAudio is OpenAI's input_audio object, in chat and Responses.
type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// chatMedia counts the media parts of a chat body whose messages
// decoded as msgs; nil when there are none, so that a text request pays
// only the scan of its parts' types. go-openai's parts keep an image's
// URL, so only audio and video, whose fields they drop, need the body's
// messages decoded again.
func chatMedia(cfg *Config, body []byte, msgs []openai.ChatCompletionMessage) (*mediaCount, *apiError) {
	if !anyMedia(msgs) {
		return nil, nil
	}
	var raw []json.RawMessage // each message's content, when some part needs it
	var parts []chatPart      // message parsed's, decoded from raw
	parsed := -1
	m := &mediaCount{}
	for i := range msgs {
		for j, part := range msgs[i].MultiContent {
			param := fmt.Sprintf("messages[%d].content[%d]", i, j)
			var p chatPart
			switch part.Type {
			case openai.ChatMessagePartTypeText:
				continue
			case openai.ChatMessagePartTypeImageURL:
				p.Type = string(part.Type)
				if part.ImageURL != nil {
					p.ImageURL = &struct {
						URL string `json:"url"`
					}{part.ImageURL.URL}
				}
			default:
				var aerr *apiError
				if raw == nil {
					if raw, aerr = messageContents(body); aerr != nil {
						return nil, aerr
					}
				}
				if parsed != i {
					if parts, aerr = rawParts(raw, i); aerr != nil {
						return nil, aerr
					}
					parsed = i
				}
				if j >= len(parts) {
					return nil, badRequest(param, "%s: the content has no such part", param)
				}
				p = parts[j]
			}
			if aerr := m.chatPart(cfg, param, &p); aerr != nil {
				return nil, aerr
			}
		}
	}
	return m, nil
}

// messageContents decodes each message's content of a chat body as it is.
func messageContents(body []byte) ([]json.RawMessage, *apiError) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("messages", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	contents := make([]json.RawMessage, len(req.Messages))
	for i := range req.Messages {
		contents[i] = req.Messages[i].Content
	}
	return contents, nil
}

// rawParts decodes the parts of message i from the contents.
func rawParts(contents []json.RawMessage, i int) ([]chatPart, *apiError) {
	var parts []chatPart
	if i < len(contents) {
		if err := json.Unmarshal(contents[i], &parts); err != nil {
			return nil, badRequest(fmt.Sprintf("messages[%d].content", i), "messages[%d].content: %v", i, err)
		}
	}
	return parts, nil
}

func anyMedia(msgs []openai.ChatCompletionMessage) bool {
	for i := range msgs {
		if hasMedia(&msgs[i]) {
			return true
		}
	}
	return false
}

// chatPart counts one part; text and unknown types (refused later, by
// messageText) count nothing here.
func (m *mediaCount) chatPart(cfg *Config, param string, p *chatPart) *apiError {
	at := where{param, p.Type}
	switch openai.ChatMessagePartType(p.Type) {
	case openai.ChatMessagePartTypeImageURL:
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return badRequest(param, "%s: image_url.url is required", at)
		}
		return m.image(cfg, at, p.ImageURL.URL)
	case partInputAudio:
		if p.InputAudio == nil || p.InputAudio.Data == "" {
			return badRequest(param, "%s: input_audio.data is required", at)
		}
		return m.audio(cfg, at, p.InputAudio.Format, p.InputAudio.Data)
	case partVideoURL:
		if p.VideoURL == nil || p.VideoURL.URL == "" {
			return badRequest(param, "%s: video_url.url is required", at)
		}
		return m.video(cfg, at, p.VideoURL.URL)
	}
	return nil
}

// withMedia is text as a translated message's content: plain while the
// message carries no media, else a text part and one placeholder per
// item added to m since before (the count of items then).
func withMedia(msg *openai.ChatCompletionMessage, text string, m *mediaCount, before int) {
	added := m.items() - before
	if added == 0 {
		msg.Content = text
		return
	}
	msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text})
	for range added {
		msg.MultiContent = append(msg.MultiContent, mediaPlaceholder)
	}
}

// items is the media items counted so far.
func (m *mediaCount) items() int {
	if m == nil {
		return 0
	}
	return m.images + m.audios + m.videos
}

// orNil is m, or nil when it counted nothing.
func (m *mediaCount) orNil() *mediaCount {
	if m.items() == 0 {
		return nil
	}
	return m
}
