// Package media holds the images, audio and video a request sends: each
// file or synthetic item read, probed and encoded once per process, then
// shared read-only by every VU, so that memory grows with the distinct
// items and not with the VUs, and a request costs no encoding. It knows
// the formats' headers (dimensions, durations) well enough to check a
// file before load and to let the simulator count what it was sent.
package media

import (
	"encoding/base64"
	"fmt"
	"sync"
)

// Kinds of media.
const (
	Image = "image"
	Audio = "audio"
	Video = "video"
)

// DefaultMaxBytes bounds a media file unless a scenario sets another
// bound: OpenAI's limit for one image.
const DefaultMaxBytes = 20 << 20

// Info is what a file's header says about it.
type Info struct {
	Kind   string // Image, Audio or Video
	Format string // png, jpeg, gif, webp; wav, mp3, flac, ogg; mp4, webm
	MIME   string // image/png, audio/wav, ...
	// Width and Height of an image (or a video, where its header says).
	Width, Height int
	// Seconds of audio or video; 0 when the header does not say.
	Seconds    float64
	SampleRate int
	Channels   int
}

// Item is one media file as a request sends it. Its bytes and their
// base64 encoding are computed once and never change: every request
// that sends it shares them, and a request body references them rather
// than copying. Safe for concurrent use.
type Item struct {
	Info
	// Name says where the item came from (a file path, or "synthetic
	// 1024x1024 jpeg #3"), for errors and labels.
	Name string
	data []byte
	b64  []byte // set for items whose encoding is not data's (bad base64)
	once sync.Once
}

// New returns the item of data, checked: its format is sniffed from the
// bytes, its header probed, and a file beyond maxBytes (0: no bound) or
// one that is not a whole image, audio or video file is an error that
// names name.
func New(name string, data []byte, maxBytes int) (*Item, error) {
	if maxBytes > 0 && len(data) > maxBytes {
		return nil, fmt.Errorf("%s: %s is larger than the bound of %s (set max_bytes to allow it)",
			name, Bytes(int64(len(data))), Bytes(int64(maxBytes)))
	}
	info, err := Probe(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := CheckWhole(info.Format, data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Item{Info: info, Name: name, data: data}, nil
}

// Raw returns an item of data as it is, unchecked, with the info given:
// the deliberately broken files of dirty-data kinds.
func Raw(name string, info Info, data []byte) *Item {
	return &Item{Info: info, Name: name, data: data}
}

// withBase64 returns an item of data whose base64 text is b64 as it is.
func withBase64(name string, info Info, data, b64 []byte) *Item {
	it := &Item{Info: info, Name: name, data: data, b64: b64}
	it.once.Do(func() {})
	return it
}

// Data returns the item's bytes; they must not be modified.
func (it *Item) Data() []byte { return it.data }

// Size is the item's length in bytes.
func (it *Item) Size() int { return len(it.data) }

// Base64 returns the item's bytes in standard base64, encoded on first
// use and shared after; it must not be modified.
func (it *Item) Base64() []byte {
	it.once.Do(func() {
		it.b64 = make([]byte, base64.StdEncoding.EncodedLen(len(it.data)))
		base64.StdEncoding.Encode(it.b64, it.data)
	})
	return it.b64
}

// DataURLPrefix is what precedes the base64 text in the item's data URL.
func (it *Item) DataURLPrefix() string { return "data:" + it.MIME + ";base64," }

// DataURL returns the item as a data URL (a copy: for tests and small
// items; request bodies reference Base64 instead).
func (it *Item) DataURL() string { return it.DataURLPrefix() + string(it.Base64()) }

// Bytes formats n bytes for a message: "512 B", "1.5 MB".
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}
