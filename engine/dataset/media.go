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

// ImagePlaceholder marks where a record's image goes in its prompt text,
// as LLaVA-style datasets write it.
const ImagePlaceholder = "<image>"

// MediaOptions tune LoadMedia; the zero value reads "prompt" prompts and
// "image" images under the default size bound.
type MediaOptions struct {
	// Field is the prompt field of a record without conversations
	// ("prompt" when empty).
	Field string
	// ImageField names the record's images: a path or a list of paths,
	// relative to the dataset file's directory ("image" when empty).
	ImageField string
	// MaxBytes bounds each image (0: media.DefaultMaxBytes).
	MaxBytes int
}

// DefaultImageField is the record field LoadMedia reads images from
// unless told otherwise.
const DefaultImageField = "image"

// LoadMedia loads a dataset whose records name image files: a JSON array
// or one object a line of LLaVA/ShareGPT records ({"image": "coco/x.jpg",
// "conversations": [{"from": "human", "value": "<image>\nWhat is...?"},
// ...]}) or JSONL records ({"prompt": "...", "image": ["a.png", "b.png"]}).
// Each item is one user message whose Parts are the record's first human
// turn with its images: each
// ImagePlaceholder replaced by the next image, and the images left over
// (all of them when the text has no placeholder) before the text. The
// images are read with media.Load, so each file is read once per process
// whatever the number of records and pools naming it. A record without an
// image, an image that is missing or not an image, is an error naming the
// file, line and field. The file loads once per process per options.
func LoadMedia(ctx context.Context, path string, o MediaOptions) (*Pool, error) {
	if o.Field == "" {
		o.Field = DefaultField
	}
	if o.ImageField == "" {
		o.ImageField = DefaultImageField
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

// mediaItem reads one record: its prompt and its images as parts. A
// record with no human turn is skipped (the zero Item).
func mediaItem(raw json.RawMessage, dir string, o MediaOptions) (Item, error) {
	if firstByte(raw) != '{' {
		return Item{}, fmt.Errorf("is %s, want an object with %q", jsonKind(raw), o.ImageField)
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Item{}, err
	}
	paths, err := imagePaths(rec, o.ImageField)
	if err != nil {
		return Item{}, err
	}
	text, err := recordText(rec, o.Field)
	if err != nil || text == "" {
		return Item{}, err
	}
	images := make([]*media.Item, len(paths))
	for i, p := range paths {
		it, err := media.Load(ResolvePath(dir, p), o.MaxBytes)
		if err != nil {
			return Item{}, fmt.Errorf("field %q: %w", o.ImageField, err)
		}
		if it.Kind != media.Image {
			return Item{}, fmt.Errorf("field %q: %s: a %s file, not an image", o.ImageField, p, it.Format)
		}
		images[i] = it
	}
	return Item{Messages: []engine.Message{{Role: "user", Parts: ImageParts(text, images)}}}, nil
}

// ResolvePath is name relative to dir unless it is absolute.
func ResolvePath(dir, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// imagePaths reads a record's image field: a path or a list of paths.
func imagePaths(rec map[string]json.RawMessage, field string) ([]string, error) {
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
		return nil, fmt.Errorf("field %q: no image", field)
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
		return "", fmt.Errorf(`no "conversations", "messages" or %q (fields: %s)`, field, strings.Join(sortedKeys(rec), ", "))
	}
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("field %q is %s, want a string", field, jsonKind(raw))
	}
	return s, nil
}

// ImageParts is text with images as content parts: each ImagePlaceholder
// replaced by the next image (the whitespace around it trimmed), and the
// images left over placed before the text. The parts are shared by every
// request that sends them: never modify them.
func ImageParts(text string, images []*media.Item) []engine.Part {
	segs := strings.Split(text, ImagePlaceholder)
	used := min(len(segs)-1, len(images))
	parts := make([]engine.Part, 0, len(images)+len(segs))
	for _, im := range images[used:] {
		parts = append(parts, engine.Part{Type: engine.PartImage, Media: im})
	}
	for i, seg := range segs {
		if i > 0 && i-1 < used {
			parts = append(parts, engine.Part{Type: engine.PartImage, Media: images[i-1]})
		}
		if seg = strings.TrimSpace(seg); seg != "" {
			parts = append(parts, engine.Part{Type: engine.PartText, Text: seg})
		}
	}
	// Every VU sends this slice: its capacity ends at its length, so an
	// append makes a copy instead of writing into memory others share.
	return parts[:len(parts):len(parts)]
}
