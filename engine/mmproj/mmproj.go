// Package mmproj writes llama.cpp multimodal projectors — the `--mmproj`
// GGUF file that makes llama-server accept images (a LLaVA-style "mlp"
// projector) or audio (a Qwen2-Audio-style "qwen2a" one) — with seeded
// random weights, and starts llama-server with one for a test.
//
// It exists for the real-server tests of images and audio: CI already
// builds llama-server and fetches the text model stories260K, but no
// registry it can reach ships a vision or audio model. A projector of a
// few hundred kilobytes, written here in well under a second, gives the
// server its multimodal path for real. With random weights the model's
// text is gibberish; the server's framing, usage, token counts, timings
// and refusals are its own.
//
// The layout follows the GGUF v3 format (ggml's docs/gguf.md; little-
// endian: magic, version, tensor and key counts, the typed key-value
// pairs, the tensor infos, padding to the alignment, then the tensors'
// data) and the tensor names and shapes llama.cpp's clip loader (its
// tools/mtmd) asks for of each projector type.
package mmproj

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
)

// GGUF's fixed values.
const (
	magic     = "GGUF"
	version   = 3
	alignment = 32 // general.alignment's default, which this file does not override
	typeF32   = 0  // ggml_type of a 32-bit float tensor
)

// GGUF's value types of a key-value pair.
const (
	kvUint32  = 4
	kvFloat32 = 6
	kvBool    = 7
	kvString  = 8
	kvArray   = 9
)

// Bounds of what a test can ask for: beyond them the file, or the
// server's work on each image, is too large to be a test's.
const (
	maxImageSize = 1024
	maxGrid      = 64 // patches a side: 4,096 an image
	maxTextEmbd  = 8192
)

// Widths of the random encoders: as small as llama.cpp accepts, so that
// the server's work per image or audio chunk is the framing, not maths.
const (
	encEmbd  = 32 // the encoder's embedding width
	encFF    = 64 // its feed-forward width
	encHeads = 2
	melBins  = 128  // the audio encoder's input: 128 mel bins (Whisper large-v3, Qwen2-Audio)
	audioPos = 1500 // audio positions: one 30 s chunk after the convolutions
)

// VisionOptions describe a vision projector.
type VisionOptions struct {
	// ImageSize is the side in pixels every image is resized to (0: 28).
	// An image then costs Patches() tokens whatever its own size.
	ImageSize int
	// PatchSize is the side of a patch in pixels (0: 14); it divides ImageSize.
	PatchSize int
	// TextEmbd is the text model's embedding width (n_embd), which the
	// projector's output must match: 64 for stories260K (0: 64).
	TextEmbd int
	// Blocks is the number of encoder blocks (0: 2).
	Blocks int
	// Seed makes the weights: the same options write the same bytes.
	Seed uint64
}

func (o VisionOptions) normal() VisionOptions {
	if o.ImageSize == 0 {
		o.ImageSize = 28
	}
	if o.PatchSize == 0 {
		o.PatchSize = 14
	}
	if o.TextEmbd == 0 {
		o.TextEmbd = 64
	}
	if o.Blocks == 0 {
		o.Blocks = 2
	}
	return o
}

// Check says what is wrong with o, naming the field.
func (o VisionOptions) Check() error {
	o = o.normal()
	switch {
	case o.PatchSize < 1 || o.PatchSize > maxImageSize:
		return fmt.Errorf("mmproj: patch_size = %d: want 1 to %d pixels", o.PatchSize, maxImageSize)
	case o.ImageSize < 1 || o.ImageSize > maxImageSize:
		return fmt.Errorf("mmproj: image_size = %d: want 1 to %d pixels", o.ImageSize, maxImageSize)
	case o.ImageSize%o.PatchSize != 0:
		return fmt.Errorf("mmproj: image_size = %d: not a multiple of patch_size %d", o.ImageSize, o.PatchSize)
	case o.ImageSize/o.PatchSize > maxGrid:
		return fmt.Errorf("mmproj: image_size = %d: %d patches of %d px a side, beyond %d", o.ImageSize, o.ImageSize/o.PatchSize, o.PatchSize, maxGrid)
	case o.TextEmbd < 1 || o.TextEmbd > maxTextEmbd:
		return fmt.Errorf("mmproj: text_embd = %d: want the text model's n_embd, 1 to %d", o.TextEmbd, maxTextEmbd)
	case o.Blocks < 1 || o.Blocks > 32:
		return fmt.Errorf("mmproj: blocks = %d: want 1 to 32", o.Blocks)
	}
	return nil
}

// Patches is the number of patches of an image: (image_size/patch_size)².
// llama-server's prompt count of an image is this plus its own framing
// (measured in engine/openai's llamacpp_media_test.go).
func (o VisionOptions) Patches() int {
	o = o.normal()
	n := o.ImageSize / max(o.PatchSize, 1)
	return n * n
}

// AudioOptions describe an audio projector.
type AudioOptions struct {
	// TextEmbd is the text model's embedding width (0: 64, stories260K's).
	TextEmbd int
	// Seed makes the weights.
	Seed uint64
}

func (o AudioOptions) normal() AudioOptions {
	if o.TextEmbd == 0 {
		o.TextEmbd = 64
	}
	return o
}

// Check says what is wrong with o, naming the field.
func (o AudioOptions) Check() error {
	if o = o.normal(); o.TextEmbd < 1 || o.TextEmbd > maxTextEmbd {
		return fmt.Errorf("mmproj: text_embd = %d: want the text model's n_embd, 1 to %d", o.TextEmbd, maxTextEmbd)
	}
	return nil
}

// kv is one key-value pair of the header.
type kv struct {
	key string
	val any // uint32, float32, bool, string or []float32
}

// tensor is one tensor: its name, its shape (ggml order, the fastest
// dimension first) and, when set, the one value of all its elements
// (layer norms start as the identity); else random.
type tensor struct {
	name  string
	shape []uint64
	fill  *float32
}

func (t tensor) elems() uint64 {
	n := uint64(1)
	for _, d := range t.shape {
		n *= d
	}
	return n
}

func shape(dims ...int) []uint64 {
	s := make([]uint64, len(dims))
	for i, d := range dims {
		s[i] = uint64(d)
	}
	return s
}

var one, zero = float32(1), float32(0)

// block appends an encoder block's tensors; kBias says whether attn_k
// has a bias (the Whisper encoder's has none).
func block(ts []tensor, prefix string, d, ff int, kBias bool) []tensor {
	for _, n := range []string{"attn_q", "attn_k", "attn_v", "attn_out"} {
		ts = append(ts, tensor{name: prefix + n + ".weight", shape: shape(d, d)})
		if n != "attn_k" || kBias {
			ts = append(ts, tensor{name: prefix + n + ".bias", shape: shape(d)})
		}
	}
	for _, n := range []string{"ln1", "ln2"} {
		ts = append(ts, tensor{name: prefix + n + ".weight", shape: shape(d), fill: &one},
			tensor{name: prefix + n + ".bias", shape: shape(d), fill: &zero})
	}
	return append(ts,
		tensor{name: prefix + "ffn_up.weight", shape: shape(d, ff)}, tensor{name: prefix + "ffn_up.bias", shape: shape(ff)},
		tensor{name: prefix + "ffn_down.weight", shape: shape(ff, d)}, tensor{name: prefix + "ffn_down.bias", shape: shape(d)})
}

// Vision writes a vision projector (projector_type "mlp": a ViT encoder
// whose patches go through two linear layers into the text model).
func Vision(w io.Writer, opts VisionOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	o := opts.normal()
	kvs := []kv{
		{"general.architecture", "clip"},
		{"clip.projector_type", "mlp"},
		{"clip.has_vision_encoder", true},
		{"clip.use_gelu", true},
		{"clip.vision.image_size", uint32(o.ImageSize)},
		{"clip.vision.patch_size", uint32(o.PatchSize)},
		{"clip.vision.embedding_length", uint32(encEmbd)},
		{"clip.vision.feed_forward_length", uint32(encFF)},
		{"clip.vision.block_count", uint32(o.Blocks)},
		{"clip.vision.attention.head_count", uint32(encHeads)},
		{"clip.vision.projection_dim", uint32(o.TextEmbd)},
		{"clip.vision.attention.layer_norm_epsilon", float32(1e-5)},
		{"clip.vision.image_mean", []float32{0.5, 0.5, 0.5}},
		{"clip.vision.image_std", []float32{0.5, 0.5, 0.5}},
	}
	ts := []tensor{
		{name: "v.patch_embd.weight", shape: shape(o.PatchSize, o.PatchSize, 3, encEmbd)},
		{name: "v.position_embd.weight", shape: shape(encEmbd, o.Patches())},
	}
	for i := range o.Blocks {
		ts = block(ts, fmt.Sprintf("v.blk.%d.", i), encEmbd, encFF, true)
	}
	ts = append(ts,
		tensor{name: "mm.0.weight", shape: shape(encEmbd, o.TextEmbd)}, tensor{name: "mm.0.bias", shape: shape(o.TextEmbd)},
		tensor{name: "mm.2.weight", shape: shape(o.TextEmbd, o.TextEmbd)}, tensor{name: "mm.2.bias", shape: shape(o.TextEmbd)})
	return write(w, kvs, ts, o.Seed)
}

// Audio writes an audio projector (projector_type "qwen2a": a Whisper
// encoder of one block whose frames go through one linear layer into the
// text model).
func Audio(w io.Writer, opts AudioOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	o := opts.normal()
	kvs := []kv{
		{"general.architecture", "clip"},
		{"clip.projector_type", "qwen2a"},
		{"clip.has_audio_encoder", true},
		{"clip.audio.num_mel_bins", uint32(melBins)},
		{"clip.audio.embedding_length", uint32(encEmbd)},
		{"clip.audio.feed_forward_length", uint32(encFF)},
		{"clip.audio.block_count", uint32(1)},
		{"clip.audio.attention.head_count", uint32(encHeads)},
		{"clip.audio.projection_dim", uint32(o.TextEmbd)},
		{"clip.audio.attention.layer_norm_epsilon", float32(1e-5)},
	}
	// The convolutions' biases are [1, width]: ggml adds them to a
	// [frames, width] result by broadcasting the first dimension.
	ts := []tensor{
		{name: "a.conv1d.1.weight", shape: shape(3, melBins, encEmbd)}, {name: "a.conv1d.1.bias", shape: shape(1, encEmbd)},
		{name: "a.conv1d.2.weight", shape: shape(3, encEmbd, encEmbd)}, {name: "a.conv1d.2.bias", shape: shape(1, encEmbd)},
		{name: "a.position_embd.weight", shape: shape(encEmbd, audioPos)},
	}
	ts = block(ts, "a.blk.0.", encEmbd, encFF, false)
	ts = append(ts, tensor{name: "mm.a.fc.weight", shape: shape(encEmbd, o.TextEmbd)}, tensor{name: "mm.a.fc.bias", shape: shape(o.TextEmbd)})
	return write(w, kvs, ts, o.Seed)
}

// WriteVisionFile writes a vision projector to path.
func WriteVisionFile(path string, opts VisionOptions) error {
	return writeFile(path, func(w io.Writer) error { return Vision(w, opts) })
}

// WriteAudioFile writes an audio projector to path.
func WriteAudioFile(path string, opts AudioOptions) error {
	return writeFile(path, func(w io.Writer) error { return Audio(w, opts) })
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("mmproj: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mmproj: %s: %w", path, err)
	}
	return nil
}

// padTo is the padding after n bytes to the next multiple of the alignment.
func padTo(n uint64) uint64 { return (alignment - n%alignment) % alignment }

// writer writes little-endian values, keeping the first error and the
// count of bytes written (for the padding).
type writer struct {
	w   *bufio.Writer
	n   uint64
	err error
}

func (w *writer) bytes(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
		w.n += uint64(len(b))
	}
}

func (w *writer) u32(v uint32) { w.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (w *writer) u64(v uint64) { w.bytes(binary.LittleEndian.AppendUint64(nil, v)) }
func (w *writer) f32(v float32) {
	w.u32(math.Float32bits(v))
}

// str is GGUF's string: its byte length as a uint64, then its bytes.
func (w *writer) str(s string) {
	w.u64(uint64(len(s)))
	w.bytes([]byte(s))
}

func (w *writer) pad() { w.bytes(make([]byte, padTo(w.n))) }

func (w *writer) value(v any) {
	switch v := v.(type) {
	case uint32:
		w.u32(kvUint32)
		w.u32(v)
	case float32:
		w.u32(kvFloat32)
		w.f32(v)
	case bool:
		w.u32(kvBool)
		b := byte(0)
		if v {
			b = 1
		}
		w.bytes([]byte{b})
	case string:
		w.u32(kvString)
		w.str(v)
	case []float32:
		w.u32(kvArray)
		w.u32(kvFloat32)
		w.u64(uint64(len(v)))
		for _, x := range v {
			w.f32(x)
		}
	default:
		w.err = fmt.Errorf("mmproj: no GGUF type for %T", v)
	}
}

// weightStd is the spread of the random weights: small, as an untrained
// network's, so that activations stay finite through the layers.
const weightStd = 0.02

// write writes the whole file: header, key-value pairs, tensor infos
// (each offset aligned, relative to the data), padding, then the data.
func write(out io.Writer, kvs []kv, ts []tensor, seed uint64) error {
	w := &writer{w: bufio.NewWriterSize(out, 64<<10)}
	w.bytes([]byte(magic))
	w.u32(version)
	w.u64(uint64(len(ts)))
	w.u64(uint64(len(kvs)))
	for _, p := range kvs {
		w.str(p.key)
		w.value(p.val)
	}
	var off uint64
	for _, t := range ts {
		off += padTo(off)
		w.str(t.name)
		w.u32(uint32(len(t.shape)))
		for _, d := range t.shape {
			w.u64(d)
		}
		w.u32(typeF32)
		w.u64(off)
		off += 4 * t.elems()
	}
	w.pad()
	rng := rand.New(rand.NewPCG(seed, 0x6d6d70726f6a)) // "mmproj"
	buf := make([]byte, 0, 4096)
	start := w.n
	for _, t := range ts {
		w.bytes(make([]byte, padTo(w.n-start)))
		for range t.elems() {
			v := float32(rng.NormFloat64() * weightStd)
			if t.fill != nil {
				v = *t.fill
			}
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				w.bytes(buf)
				buf = buf[:0]
			}
		}
		w.bytes(buf)
		buf = buf[:0]
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return fmt.Errorf("mmproj: writing the projector: %w", w.err)
	}
	return nil
}
