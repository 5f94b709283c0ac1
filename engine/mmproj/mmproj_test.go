package mmproj

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gguf is a file read back: its key-value pairs and tensors.
type gguf struct {
	version uint32
	kv      map[string]any
	tensors []readTensor
	data    []byte // from the aligned start of the data
}

type readTensor struct {
	name   string
	shape  []uint64
	typ    uint32
	offset uint64
}

// reader reads GGUF's little-endian values, keeping the first error.
type reader struct {
	b   []byte
	at  int
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.at+n > len(r.b) {
		r.err = fmt.Errorf("at byte %d: %d bytes wanted, %d left", r.at, n, len(r.b)-r.at)
		return nil
	}
	p := r.b[r.at : r.at+n]
	r.at += n
	return p
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.u64()))) }

func (r *reader) value(typ uint32) any {
	switch typ {
	case kvUint32:
		return r.u32()
	case kvFloat32:
		return math.Float32frombits(r.u32())
	case kvBool:
		if p := r.take(1); p != nil {
			return p[0] == 1
		}
	case kvString:
		return r.str()
	case kvArray:
		et, n := r.u32(), r.u64()
		if et != kvFloat32 {
			r.err = fmt.Errorf("array of type %d", et)
			return nil
		}
		out := make([]float32, n)
		for i := range out {
			out[i] = r.value(et).(float32)
		}
		return out
	default:
		r.err = fmt.Errorf("at byte %d: unknown value type %d", r.at, typ)
	}
	return nil
}

// readGGUF parses b as GGUF, checking the magic, the alignment of the
// data and that every tensor lies inside it.
func readGGUF(t *testing.T, b []byte) gguf {
	t.Helper()
	r := &reader{b: b}
	if m := string(r.take(4)); m != "GGUF" {
		t.Fatalf("magic %q, want GGUF", m)
	}
	g := gguf{version: r.u32(), kv: map[string]any{}}
	nt, nkv := r.u64(), r.u64()
	for range nkv {
		k := r.str()
		g.kv[k] = r.value(r.u32())
	}
	for range nt {
		rt := readTensor{name: r.str()}
		nd := r.u32()
		for range nd {
			rt.shape = append(rt.shape, r.u64())
		}
		rt.typ, rt.offset = r.u32(), r.u64()
		g.tensors = append(g.tensors, rt)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	start := (r.at + 31) / 32 * 32
	if start > len(b) || !bytes.Equal(b[r.at:start], make([]byte, start-r.at)) {
		t.Fatalf("the padding after the tensor infos (bytes %d to %d) is not zeros", r.at, start)
	}
	g.data = b[start:]
	end := uint64(0)
	for _, rt := range g.tensors {
		n := uint64(4)
		for _, d := range rt.shape {
			n *= d
		}
		if rt.offset%32 != 0 || rt.offset < end || rt.offset+n > uint64(len(g.data)) {
			t.Fatalf("tensor %s at %d (%d bytes): not aligned, overlapping or beyond the %d bytes of data (previous end %d)",
				rt.name, rt.offset, n, len(g.data), end)
		}
		end = rt.offset + n
	}
	if end != uint64(len(g.data)) {
		t.Fatalf("data has %d bytes, the tensors %d", len(g.data), end)
	}
	return g
}

func (g gguf) tensor(name string) (readTensor, bool) {
	for _, rt := range g.tensors {
		if rt.name == name {
			return rt, true
		}
	}
	return readTensor{}, false
}

// floats are a tensor's values.
func (g gguf) floats(rt readTensor) []float32 {
	n := uint64(1)
	for _, d := range rt.shape {
		n *= d
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(g.data[rt.offset+4*uint64(i):]))
	}
	return out
}

func encode(t *testing.T, f func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func visionFile(t *testing.T, o VisionOptions) []byte {
	return encode(t, func(w io.Writer) error { return Vision(w, o) })
}

func audioFile(t *testing.T, o AudioOptions) []byte {
	return encode(t, func(w io.Writer) error { return Audio(w, o) })
}

// The files read back as GGUF v3: the keys llama.cpp's clip loader reads,
// and the tensors it asks for with the shapes its graphs need — the
// patch grid from image_size and patch_size, the last projection as wide
// as the text model.
func TestLayout(t *testing.T) {
	tests := []struct {
		name    string
		file    []byte
		kv      map[string]any
		tensors int
		shapes  map[string][]uint64
		absent  []string
	}{
		{"vision default", visionFile(t, VisionOptions{}),
			map[string]any{"general.architecture": "clip", "clip.projector_type": "mlp", "clip.has_vision_encoder": true,
				"clip.vision.image_size": uint32(28), "clip.vision.patch_size": uint32(14), "clip.vision.projection_dim": uint32(64),
				"clip.vision.block_count": uint32(2), "clip.vision.attention.layer_norm_epsilon": float32(1e-5)},
			2 + 2*16 + 4,
			map[string][]uint64{"v.patch_embd.weight": {14, 14, 3, 32}, "v.position_embd.weight": {32, 4},
				"v.blk.1.ffn_down.weight": {64, 32}, "mm.0.weight": {32, 64}, "mm.2.weight": {64, 64}, "mm.2.bias": {64}},
			[]string{"v.blk.2.ln1.weight"}},
		{"vision 224/16, 1 block, n_embd 288", visionFile(t, VisionOptions{ImageSize: 224, PatchSize: 16, TextEmbd: 288, Blocks: 1}),
			map[string]any{"clip.vision.image_size": uint32(224), "clip.vision.patch_size": uint32(16), "clip.vision.projection_dim": uint32(288)},
			2 + 16 + 4,
			map[string][]uint64{"v.patch_embd.weight": {16, 16, 3, 32}, "v.position_embd.weight": {32, 196}, "mm.2.weight": {288, 288}},
			[]string{"v.blk.1.attn_q.weight"}},
		{"audio", audioFile(t, AudioOptions{}),
			map[string]any{"general.architecture": "clip", "clip.projector_type": "qwen2a", "clip.has_audio_encoder": true,
				"clip.audio.num_mel_bins": uint32(128), "clip.audio.projection_dim": uint32(64), "clip.audio.block_count": uint32(1)},
			5 + 15 + 2,
			map[string][]uint64{"a.conv1d.1.weight": {3, 128, 32}, "a.conv1d.1.bias": {1, 32}, "a.conv1d.2.bias": {1, 32},
				"a.position_embd.weight": {32, 1500}, "a.blk.0.attn_k.weight": {32, 32}, "mm.a.fc.weight": {32, 64}},
			[]string{"a.blk.0.attn_k.bias", "v.patch_embd.weight"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := readGGUF(t, tc.file)
			if g.version != 3 {
				t.Errorf("version %d, want 3", g.version)
			}
			for k, want := range tc.kv {
				if got := g.kv[k]; got != want {
					t.Errorf("%s = %v (%T), want %v (%T)", k, got, got, want, want)
				}
			}
			if len(g.tensors) != tc.tensors {
				t.Errorf("%d tensors, want %d", len(g.tensors), tc.tensors)
			}
			for name, want := range tc.shapes {
				rt, ok := g.tensor(name)
				if !ok {
					t.Errorf("no tensor %s", name)
					continue
				}
				if fmt.Sprint(rt.shape) != fmt.Sprint(want) || rt.typ != typeF32 {
					t.Errorf("%s: shape %v type %d, want %v F32", name, rt.shape, rt.typ, want)
				}
			}
			for _, name := range tc.absent {
				if _, ok := g.tensor(name); ok {
					t.Errorf("tensor %s present", name)
				}
			}
		})
	}
}

// The weights: layer norms the identity, the rest small, finite, varied
// random numbers; the same seed the same bytes, another seed others.
func TestWeights(t *testing.T) {
	a, b, c := visionFile(t, VisionOptions{Seed: 7}), visionFile(t, VisionOptions{Seed: 7}), visionFile(t, VisionOptions{Seed: 8})
	if !bytes.Equal(a, b) {
		t.Error("the same options wrote different bytes")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 7 and 8 wrote the same bytes")
	}
	if len(a) != len(c) {
		t.Errorf("seeds 7 and 8 wrote %d and %d bytes", len(a), len(c))
	}
	if x, y := audioFile(t, AudioOptions{Seed: 3}), audioFile(t, AudioOptions{Seed: 3}); !bytes.Equal(x, y) {
		t.Error("the same audio options wrote different bytes")
	}
	g := readGGUF(t, a)
	for _, rt := range g.tensors {
		v := g.floats(rt)
		switch {
		case strings.HasSuffix(rt.name, "ln1.weight"), strings.HasSuffix(rt.name, "ln2.weight"):
			for i, x := range v {
				if x != 1 {
					t.Fatalf("%s[%d] = %g, want 1", rt.name, i, x)
				}
			}
		case strings.Contains(rt.name, ".ln"):
			for i, x := range v {
				if x != 0 {
					t.Fatalf("%s[%d] = %g, want 0", rt.name, i, x)
				}
			}
		default:
			var sum, sq float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 0.2 {
					t.Fatalf("%s: weight %g", rt.name, x)
				}
				sum += float64(x)
				sq += float64(x) * float64(x)
			}
			if n := float64(len(v)); len(v) >= 64 {
				if sd := math.Sqrt(sq/n - (sum/n)*(sum/n)); sd < 0.01 || sd > 0.03 {
					t.Errorf("%s: standard deviation %.4f, want about %g", rt.name, sd, weightStd)
				}
			}
		}
	}
}

// Options out of bounds are refused before anything is written, naming
// the field.
func TestBadOptions(t *testing.T) {
	tests := []struct {
		vision *VisionOptions
		audio  *AudioOptions
		want   string
	}{
		{vision: &VisionOptions{ImageSize: 30, PatchSize: 14}, want: "image_size = 30: not a multiple of patch_size 14"},
		{vision: &VisionOptions{ImageSize: -14}, want: "image_size = -14"},
		{vision: &VisionOptions{ImageSize: 2048, PatchSize: 16}, want: "image_size = 2048"},
		{vision: &VisionOptions{PatchSize: -1}, want: "patch_size = -1"},
		{vision: &VisionOptions{ImageSize: 1000, PatchSize: 10}, want: "image_size = 1000: 100 patches of 10 px a side, beyond 64"},
		{vision: &VisionOptions{TextEmbd: -64}, want: "text_embd = -64"},
		{vision: &VisionOptions{Blocks: 33}, want: "blocks = 33"},
		{audio: &AudioOptions{TextEmbd: 100000}, want: "text_embd = 100000"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var b bytes.Buffer
			var err error
			if tc.vision != nil {
				err = Vision(&b, *tc.vision)
			} else {
				err = Audio(&b, *tc.audio)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
			if b.Len() != 0 {
				t.Errorf("%d bytes written", b.Len())
			}
		})
	}
	if err := WriteVisionFile(filepath.Join(t.TempDir(), "no", "such", "dir.gguf"), VisionOptions{}); err == nil ||
		!strings.Contains(err.Error(), "no such file") {
		t.Errorf("writing into a missing directory: %v", err)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return f.n, io.ErrClosedPipe
	}
	f.n -= len(p)
	return len(p), nil
}

// A writer that fails is the error returned, not a short file said good.
func TestWriteError(t *testing.T) {
	err := Vision(&failingWriter{n: 1000}, VisionOptions{})
	if err == nil || !strings.Contains(err.Error(), "writing the projector") {
		t.Errorf("error %v, want a write error", err)
	}
}

// llama-server loads each projector: its log says it loaded the
// multimodal model, and its /props the modality it now takes.
func TestLlamaServerLoads(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		write func(string) error
		args  []string
		logs  []string
		modes map[string]bool
	}{
		{"vision", func(p string) error { return WriteVisionFile(p, VisionOptions{ImageSize: 56}) }, []string{"-c", "256"},
			[]string{"loaded multimodal model, '" + filepath.Join(dir, "vision.gguf") + "'", "model loaded"},
			map[string]bool{"vision": true, "audio": false}},
		{"audio", func(p string) error { return WriteAudioFile(p, AudioOptions{}) }, []string{"-c", "256"},
			[]string{"audio input is in experimental stage", "loaded multimodal model, '" + filepath.Join(dir, "audio.gguf") + "'", "model loaded"},
			map[string]bool{"vision": false, "audio": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".gguf")
			if err := tc.write(path); err != nil {
				t.Fatal(err)
			}
			l := StartLlama(t, path, append(tc.args, "-np", "1", "--no-warmup")...)
			log := l.LogWithin(10*time.Second, tc.logs...)
			for _, want := range tc.logs {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
			resp, err := http.Get(l.Base + "/props")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var props struct {
				Modalities map[string]bool `json:"modalities"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&props); err != nil {
				t.Fatalf("/props: %v", err)
			}
			for mode, want := range tc.modes {
				if got, ok := props.Modalities[mode]; !ok || got != want {
					t.Errorf("/props modalities %v: %s should be %v", props.Modalities, mode, want)
				}
			}
		})
	}
}
