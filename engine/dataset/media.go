package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// ImagePlaceholder and AudioPlaceholder mark where a record's image or
// audio goes in its prompt text, as LLaVA-style (and Qwen-Audio-style)
// datasets write it.
const (
	ImagePlaceholder = "<image>"
	AudioPlaceholder = "<audio>"
)

// MediaOptions tune LoadMedia; the zero value reads "prompt" prompts and
// "image" images under the default size bound.
type MediaOptions struct {
	// Kind is what the records name: media.Image (when empty) or
	// media.Audio.
	Kind string
	// Field is the prompt field of a record without conversations
	// ("prompt" when empty).
	Field string
	// MediaField names the record's files: a path or a list of paths,
	// relative to the dataset file's directory ("image" or "audio", after
	// Kind, when empty).
	MediaField string
	// MaxBytes bounds each file (0: media.DefaultMaxBytes).
	MaxBytes int
}

// DefaultImageField and DefaultAudioField are the record fields LoadMedia
// reads files from unless told otherwise.
const (
	DefaultImageField = "image"
	DefaultAudioField = "audio"
)

// LoadMedia loads a dataset whose records name image (or audio) files: a
// JSON array or one object a line of LLaVA/ShareGPT records ({"image":
// "coco/x.jpg", "conversations": [{"from": "human", "value":
// "<image>\nWhat is...?"}, ...]}) or JSONL records ({"prompt": "...",
// "image": ["a.png", "b.png"]}). Each item is one user message whose Parts
// are the record's first human turn with its files: each placeholder
// (ImagePlaceholder, AudioPlaceholder) replaced by the next file, and the
// files left over (all of them when the text has no placeholder) before
// the text. An audio record may have no text at all (a speech corpus's
// {"audio": "a.wav", "text": "its transcript"}): its item is the audio
// alone. The files are read with media.Load, so each is read once per
// process whatever the number of records and pools naming it. A record
// without a file, a file that is missing or not of Kind, is an error
// naming the file, line and field. The file loads once per process per
// options.
func LoadMedia(ctx context.Context, path string, o MediaOptions) (*Pool, error) {
	if o.Field == "" {
		o.Field = DefaultField
	}
	if o.Kind == "" {
		o.Kind = media.Image
	}
	if o.MediaField == "" {
		o.MediaField = DefaultImageField
		if o.Kind == media.Audio {
			o.MediaField = DefaultAudioField
		}
	}
	return cachedLoad(path, "media", o, func() (*Pool, error) { return loadMedia(ctx, path, o) })
}

func loadMedia(ctx context.Context, path string, o MediaOptions) (*Pool, error) {
	s, err := openSource(ctx, path, recordLimits)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dir := filepath.Dir(path)
	var items []Item
	err = eachRecord(s.r, s.g.recordEnded, func(n int, raw json.RawMessage) error {
		it, err := mediaItem(raw, dir, o)
		if err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		if it.Messages != nil {
			items = append(items, it)
		}
		return nil
	})
	var se *sourceError
	if errors.As(err, &se) {
		return nil, se
	}
	var re *recordError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("%s:%d: %w", path, lineAt(path, re.offset), re.err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return finish(path, items)
}

// mediaItem reads one record: its prompt and its files as parts. A
// record with no human turn is skipped (the zero Item).
func mediaItem(raw json.RawMessage, dir string, o MediaOptions) (Item, error) {
	if firstByte(raw) != '{' {
		return Item{}, fmt.Errorf("is %s, want an object with %q", jsonKind(raw), o.MediaField)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Item{}, err
	}
	paths, err := mediaPaths(rec, o.MediaField, o.Kind)
	if err != nil {
		return Item{}, err
	}
	text, err := recordText(rec, o.Field)
	if errors.Is(err, errNoText) && o.Kind == media.Audio {
		text, err = "", nil // the audio is the whole message
	} else if err != nil || text == "" {
		return Item{}, err
	}
	items := make([]*media.Item, len(paths))
	for i, p := range paths {
		it, err := media.Load(ResolvePath(dir, p), o.MaxBytes)
		if err != nil {
			return Item{}, fmt.Errorf("field %q: %w", o.MediaField, err)
		}
		if it.Kind != o.Kind {
			return Item{}, fmt.Errorf("field %q: %s: a %s file, not %s", o.MediaField, p, it.Format, article(o.Kind))
		}
		items[i] = it
	}
	if o.Kind == media.Audio {
		return Item{Messages: []engine.Message{{Role: "user", Parts: MediaParts(text, items, AudioPlaceholder, engine.PartAudio)}}}, nil
	}
	return Item{Messages: []engine.Message{{Role: "user", Parts: ImageParts(text, items)}}}, nil
}

// article is kind with its indefinite article: "an image", "audio".
func article(kind string) string {
	if kind == media.Image {
		return "an image"
	}
	return kind
}

// ResolvePath is name relative to dir unless it is absolute.
func ResolvePath(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// mediaPaths reads a record's media field: a path or a list of paths.
func mediaPaths(rec map[string]json.RawMessage, field, kind string) ([]string, error) {
	raw, ok := rec[field]
	if !ok {
		return nil, fmt.Errorf("no field %q (fields: %s)", field, strings.Join(sortedKeys(rec), ", "))
	}
	var paths []string
	switch firstByte(raw) {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("field %q: %w", field, err)
		}
		paths = []string{s}
	case '[':
		if err := json.Unmarshal(raw, &paths); err != nil {
			return nil, fmt.Errorf("field %q: want a list of paths", field)
		}
	default:
		return nil, fmt.Errorf("field %q is %s, want a path or a list of paths", field, jsonKind(raw))
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("field %q: no %s", field, kind)
	}
	for i, p := range paths {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("field %q: path %d is empty", field, i+1)
		}
	}
	return paths, nil
}

// recordText is a record's first human turn (conversations or messages),
// else its prompt field.
func recordText(rec map[string]json.RawMessage, field string) (string, error) {
	turns, ok := rec["conversations"]
	if !ok {
		turns, ok = rec["messages"]
	}
	if ok {
		msgs, err := shareGPTTurns(turns)
		if err != nil {
			return "", err
		}
		return conversationItem(msgs, false).Text, nil
	}
	raw, ok := rec[field]
	if !ok {
		return "", fmt.Errorf(`%w: no "conversations", "messages" or %q (fields: %s)`, errNoText, field, strings.Join(sortedKeys(rec), ", "))
	}
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("field %q is %s, want a string", field, jsonKind(raw))
	}
	return s, nil
}

// errNoText is a record with neither conversations nor a prompt field.
var errNoText = errors.New("no prompt")

// ImageParts is text with images as content parts: each ImagePlaceholder
// replaced by the next image (the whitespace around it trimmed), and the
// images left over placed before the text. The parts are shared by every
// request that sends them: never modify them.
func ImageParts(text string, images []*media.Item) []engine.Part {
	return MediaParts(text, images, ImagePlaceholder, engine.PartImage)
}

// MediaParts is ImageParts for parts of type typ marked by placeholder.
func MediaParts(text string, items []*media.Item, placeholder, typ string) []engine.Part {
	segs := strings.Split(text, placeholder)
	used := min(len(segs)-1, len(items))
	parts := make([]engine.Part, 0, len(items)+len(segs))
	for _, im := range items[used:] {
		parts = append(parts, engine.Part{Type: typ, Media: im})
	}
	for i, seg := range segs {
		if i > 0 && i-1 < used {
			parts = append(parts, engine.Part{Type: typ, Media: items[i-1]})
		}
		if seg = strings.TrimSpace(seg); seg != "" {
			parts = append(parts, engine.Part{Type: engine.PartText, Text: seg})
		}
	}
	// Every VU sends this slice: its capacity ends at its length, so an
	// append makes a copy instead of writing into memory others share.
	return parts[:len(parts):len(parts)]
}
