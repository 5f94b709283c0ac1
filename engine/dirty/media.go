package dirty

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// The media kinds send a broken image or audio file in a request that is
// otherwise the scenario's own. Each broken file is made once per process
// (a handful of seeds, so a run reuses them) and shared like any other.

// mediaSeeds bounds the distinct broken files a run makes: an oversize
// image is megabytes, and variety beyond a few adds nothing.
const mediaSeeds = 4

// ErrNotForAPI is wrapped by Apply's error for a kind the request's API
// cannot carry (an image in a completion, audio in Anthropic's Messages).
var ErrNotForAPI = errors.New("not a kind this API can carry")

var (
	errNeedsMedia = fmt.Errorf("%w: needs a chat, Responses or Messages request (the APIs that take images)", ErrNotForAPI)
	errNeedsAudio = fmt.Errorf("%w: needs a chat or Responses request, or a transcription (the APIs that take audio)", ErrNotForAPI)
)

// seedOf picks one of the broken files' seeds.
func seedOf(rng *rand.Rand) uint64 { return uint64(rng.IntN(mediaSeeds)) + 1 }

// takesImages reports whether req's API takes image parts; a Responses
// request whose input is a string becomes one of a user message, which
// can hold them.
func takesImages(req *engine.ChatRequest) bool {
	switch req.Endpoint {
	case "", engine.EndpointChat, engine.EndpointResponses, engine.EndpointMessages:
		asMessage(req)
		return true
	}
	return false
}

// asMessage turns a Responses request's string input into a user message.
func asMessage(req *engine.ChatRequest) {
	if promptInput(req) {
		req.Messages = []engine.Message{{Role: "user", Content: req.Prompt}}
		req.Prompt = ""
	}
}

// firstImage returns the request's first inline image, nil when it has
// none.
func firstImage(req *engine.ChatRequest) *media.Item {
	for i := range req.Messages {
		for _, p := range req.Messages[i].Parts {
			if p.Type == engine.PartImage && p.Media != nil {
				return p.Media
			}
		}
	}
	return nil
}

// putMedia puts it into the last user message (copied first, as target
// does): in place of its first part of the same type, or after its parts,
// the message's text becoming a text part.
func putMedia(req *engine.ChatRequest, typ string, it *media.Item) {
	req.Messages = slices.Clone(req.Messages)
	at := -1
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			at = i
			break
		}
	}
	if at < 0 {
		req.Messages = append(req.Messages, engine.Message{Role: "user", Content: defaultText})
		at = len(req.Messages) - 1
	}
	m := &req.Messages[at]
	if len(m.Parts) == 0 {
		text := m.Content
		if text == "" {
			text = defaultText
		}
		m.Parts = []engine.Part{{Type: engine.PartText, Text: text}}
	} else {
		m.Parts = slices.Clone(m.Parts)
	}
	for j := range m.Parts {
		if m.Parts[j].Type == typ {
			m.Parts[j] = engine.Part{Type: typ, Media: it, Detail: m.Parts[j].Detail}
			return
		}
	}
	m.Parts = append(m.Parts, engine.Part{Type: typ, Media: it})
}

// sourceImage is the image a kind breaks: the request's own, or a
// synthetic 256×256 JPEG.
func sourceImage(req *engine.ChatRequest, seed uint64) (*media.Item, error) {
	if it := firstImage(req); it != nil {
		return it, nil
	}
	return media.SyntheticImage(media.ImageSpec{Width: 256, Height: 256}, seed, -3)
}

func truncatedImage(req *engine.ChatRequest, rng *rand.Rand) error {
	if !takesImages(req) {
		return errNeedsMedia
	}
	src, err := sourceImage(req, seedOf(rng))
	if err != nil {
		return err
	}
	putMedia(req, engine.PartImage, media.Truncated(src))
	return nil
}

func mislabeledImage(req *engine.ChatRequest, rng *rand.Rand) error {
	if !takesImages(req) {
		return errNeedsMedia
	}
	it, err := media.Mislabeled(seedOf(rng))
	if err != nil {
		return err
	}
	putMedia(req, engine.PartImage, it)
	return nil
}

func zeroPixelImage(req *engine.ChatRequest, _ *rand.Rand) error {
	if !takesImages(req) {
		return errNeedsMedia
	}
	putMedia(req, engine.PartImage, media.ZeroPixel())
	return nil
}

func oversizeImage(req *engine.ChatRequest, _ *rand.Rand) error {
	if !takesImages(req) {
		return errNeedsMedia
	}
	// One seed only: each oversize file is 20 MB and its base64 27.
	it, err := media.Oversize(media.DefaultMaxBytes, 1)
	if err != nil {
		return err
	}
	putMedia(req, engine.PartImage, it)
	return nil
}

func badBase64(req *engine.ChatRequest, rng *rand.Rand) error {
	if !takesImages(req) {
		return errNeedsMedia
	}
	src, err := sourceImage(req, seedOf(rng))
	if err != nil {
		return err
	}
	putMedia(req, engine.PartImage, media.BadBase64(src))
	return nil
}

func lyingAudioHeader(req *engine.ChatRequest, rng *rand.Rand) error {
	it, err := media.LyingHeader(seedOf(rng))
	if err != nil {
		return err
	}
	switch req.Endpoint {
	case engine.EndpointTranscriptions:
		req.Audio = it
	case "", engine.EndpointChat, engine.EndpointResponses:
		asMessage(req)
		putMedia(req, engine.PartAudio, it)
	default:
		return errNeedsAudio
	}
	return nil
}

// mediaKinds are the kinds that send a broken media file.
var mediaKinds = map[string]bool{
	"bad_base64": true, "lying_audio_header": true, "mislabeled_image": true,
	"oversize_image": true, "truncated_image": true, "zero_pixel_image": true,
}

// IsMedia reports whether kind sends a broken image or audio file: the
// kinds a mix of every kind draws only for requests that carry media.
func IsMedia(kind string) bool { return mediaKinds[kind] }
