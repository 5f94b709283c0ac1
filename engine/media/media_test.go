package media

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSynthImageProbes(t *testing.T) {
	for _, tc := range []struct {
		spec ImageSpec
		mime string
	}{
		{ImageSpec{Width: 1024, Height: 1024}, "image/jpeg"},
		{ImageSpec{Width: 640, Height: 480, Format: "png"}, "image/png"},
		{ImageSpec{Width: 1, Height: 1, Format: "jpeg", Quality: 10}, "image/jpeg"},
		{ImageSpec{Width: 33, Height: 7, Format: "png"}, "image/png"},
	} {
		it, err := SynthImage(tc.spec, 1, 0)
		if err != nil {
			t.Fatalf("%v: %v", tc.spec, err)
		}
		if it.Width != tc.spec.Width || it.Height != tc.spec.Height || it.MIME != tc.mime {
			t.Errorf("%v: probed %+v", tc.spec, it.Info)
		}
	}
}

func TestSynthImageCompressesLikeAPhoto(t *testing.T) {
	// A 1024² JPEG of a photograph is some 100–400 KB at q85: far from a
	// flat colour's few KB and from pure noise's megabyte and more.
	it, err := SynthImage(ImageSpec{Width: 1024, Height: 1024}, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := it.Size(); n < 100<<10 || n > 800<<10 {
		t.Errorf("1024² jpeg q85 is %s, want 100 KB–800 KB", Bytes(int64(n)))
	}
}

func TestSynthReproducible(t *testing.T) {
	a, _ := SynthImage(ImageSpec{Width: 64, Height: 64}, 3, 1)
	b, _ := SynthImage(ImageSpec{Width: 64, Height: 64}, 3, 1)
	c, _ := SynthImage(ImageSpec{Width: 64, Height: 64}, 3, 2)
	d, _ := SynthImage(ImageSpec{Width: 64, Height: 64}, 4, 1)
	if !bytes.Equal(a.Data(), b.Data()) {
		t.Error("same seed and variant, different bytes")
	}
	if bytes.Equal(a.Data(), c.Data()) || bytes.Equal(a.Data(), d.Data()) {
		t.Error("another variant or seed made the same bytes")
	}
	x, _ := SynthAudio(AudioSpec{Seconds: 0.5}, 3, 1)
	y, _ := SynthAudio(AudioSpec{Seconds: 0.5}, 3, 1)
	if !bytes.Equal(x.Data(), y.Data()) {
		t.Error("audio: same seed and variant, different bytes")
	}
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ImageSpec{Width: 0, Height: 10}.Check(), "width = 0"},
		{ImageSpec{Width: 10, Height: 100000}.Check(), "height = 100000"},
		{ImageSpec{Width: 10, Height: 10, Format: "bmp"}.Check(), `format = "bmp"`},
		{ImageSpec{Width: 10, Height: 10, Quality: 101}.Check(), "quality = 101"},
		{AudioSpec{Seconds: 0}.Check(), "seconds = 0"},
		{AudioSpec{Seconds: 1, SampleRate: 100}.Check(), "sample_rate = 100"},
		{AudioSpec{Seconds: 1, Format: "mp3"}.Check(), `format = "mp3"`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", tc.err, tc.want)
		}
	}
}

func TestSynthAudioHeader(t *testing.T) {
	it, err := SynthAudio(AudioSpec{Seconds: 2.5, SampleRate: 24000}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if it.Format != "wav" || it.SampleRate != 24000 || it.Channels != 1 || it.Seconds != 2.5 {
		t.Errorf("probed %+v", it.Info)
	}
}

func TestProbeErrors(t *testing.T) {
	jpg, _ := SynthImage(ImageSpec{Width: 32, Height: 32}, 1, 0)
	lying, _ := LyingHeader(1)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte("hello, this is not an image"), "not an image"},
		{"empty", nil, "not an image"},
		{"zero pixel", ZeroPixel().Data(), "non-positive dimension"},
		{"lying wav", lying.Data(), "says"},
		{"truncated jpeg", Truncated(jpg).Data(), "truncated jpeg"},
		{"png header only", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "unreadable png header"},
		{"wav without data", []byte("RIFF\x04\x00\x00\x00WAVE"), "no fmt chunk"},
	} {
		_, err := New(tc.name, tc.data, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.name) {
			t.Errorf("%s: error %v, want one beginning with the name and naming %q", tc.name, err, tc.want)
		}
	}
}

func TestBrokenItems(t *testing.T) {
	mis, err := Mislabeled(1)
	if err != nil {
		t.Fatal(err)
	}
	if Sniff(mis.Data()) != "png" || mis.MIME != "image/jpeg" {
		t.Errorf("mislabeled: sniffed %s, labelled %s", Sniff(mis.Data()), mis.MIME)
	}
	over, err := Oversize(1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if over.Size() <= 1<<20 || over.Size() > 1<<20+200000 {
		t.Errorf("oversize is %d bytes, want just beyond 1 MB", over.Size())
	}
	if _, err := New("x", over.Data(), 0); err != nil {
		t.Errorf("oversize is not a valid jpeg: %v", err)
	}
	if _, err := New("x", over.Data(), 1<<20); err == nil || !strings.Contains(err.Error(), "larger than the bound") {
		t.Errorf("oversize within its bound: %v", err)
	}
	jpg, _ := SynthImage(ImageSpec{Width: 32, Height: 32}, 1, 0)
	bad := BadBase64(jpg)
	if _, err := base64.StdEncoding.DecodeString(string(bad.Base64())); err == nil {
		t.Error("bad base64 decodes")
	}
	if _, err := base64.StdEncoding.DecodeString(string(jpg.Base64())); err != nil {
		t.Errorf("the source's base64 was spoiled: %v", err)
	}
}

func TestLoadAndDir(t *testing.T) {
	dir := t.TempDir()
	jpg, _ := SynthImage(ImageSpec{Width: 20, Height: 10}, 1, 0)
	os.WriteFile(filepath.Join(dir, "a.jpg"), jpg.Data(), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	items, err := LoadDir(dir, Image, 0)
	if err != nil || len(items) != 1 || items[0].Width != 20 {
		t.Fatalf("LoadDir: %v %v", items, err)
	}
	again, _ := Load(filepath.Join(dir, "a.jpg"), 0)
	if again != items[0] {
		t.Error("a file loaded twice is two items")
	}
	empty := t.TempDir()
	if _, err := LoadDir(empty, Image, 0); err == nil || !strings.Contains(err.Error(), "no image files") {
		t.Errorf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(empty, "fake.png"), []byte("not a png at all"), 0o644)
	if _, err := LoadDir(empty, Image, 0); err == nil || !strings.Contains(err.Error(), "fake.png") {
		t.Errorf("fake png: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.png"), 0); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "a.jpg"), 100); err == nil || !strings.Contains(err.Error(), "larger than the bound") {
		t.Errorf("bound: %v", err)
	}
}

func FuzzProbe(f *testing.F) {
	jpg, _ := SynthImage(ImageSpec{Width: 8, Height: 8}, 1, 0)
	wav, _ := SynthAudio(AudioSpec{Seconds: 0.01}, 1, 0)
	f.Add(jpg.Data())
	f.Add(wav.Data())
	f.Add(ZeroPixel().Data())
	f.Add([]byte("ID3\x03\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"))
	f.Add([]byte("fLaC\x00\x00\x00\x22"))
	f.Add([]byte("OggS\x00\x02"))
	f.Add([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x08moov"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Probe(data)
		if err == nil && info.Kind == "" {
			t.Errorf("no error and no kind")
		}
	})
}
