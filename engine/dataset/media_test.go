package dataset

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// mediaFixture writes two small images (img/a.png, img/b.jpg) and a text
// file posing as an image into a temporary directory.
func mediaFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]media.ImageSpec{
		"img/a.png": {Width: 20, Height: 10, Format: "png"},
		"img/b.jpg": {Width: 16, Height: 16, Format: "jpeg"},
	} {
		it, err := media.SynthImage(spec, 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), it.Data(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "img/fake.png"), []byte("plain text"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// partsString writes parts as "image(20x10) text(What?)".
func partsString(parts []engine.Part) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		if p.Type == engine.PartText {
			b.WriteString("text(" + p.Text + ")")
			continue
		}
		b.WriteString(p.Type + "(" + filepath.Base(p.Media.Name) + ")")
	}
	return b.String()
}

func TestLoadMedia(t *testing.T) {
	tests := []struct {
		name, file, content string
		opts                MediaOptions
		want                []string
	}{
		{"llava array", "llava.json", `[
{"id":"1","image":"img/a.png","conversations":[{"from":"human","value":"<image>\nWhat is this?"},{"from":"gpt","value":"a"}]},
{"id":"2","image":"img/b.jpg","conversations":[{"from":"human","value":"Describe <image> briefly"},{"from":"gpt","value":"b"}]}
]`, MediaOptions{}, []string{"image(a.png) text(What is this?)", "text(Describe) image(b.jpg) text(briefly)"}},
		{"jsonl list, no placeholder", "d.jsonl", `{"prompt":"Compare them","image":["img/a.png","img/b.jpg"]}
{"prompt":"<image> first, then the other","image":["img/a.png","img/b.jpg"]}
`, MediaOptions{}, []string{"image(a.png) image(b.jpg) text(Compare them)", "image(b.jpg) image(a.png) text(first, then the other)"}},
		{"named fields", "d.jsonl", `{"q":"What?","pics":"img/b.jpg"}`, MediaOptions{Field: "q", MediaField: "pics"},
			[]string{"image(b.jpg) text(What?)"}},
		{"sharegpt messages", "s.json", `[{"image":"img/a.png","messages":[{"role":"user","content":"Hi <image>"}]}]`,
			MediaOptions{}, []string{"text(Hi) image(a.png)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mediaFixture(t)
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadMedia(context.Background(), path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != len(tt.want) {
				t.Fatalf("%d items, want %d", p.Len(), len(tt.want))
			}
			for i, w := range tt.want {
				if got := partsString(p.Item(i).Messages[0].Parts); got != w {
					t.Errorf("item %d = %s, want %s", i+1, got, w)
				}
			}
			again, err := LoadMedia(context.Background(), path, tt.opts)
			if err != nil || again != p {
				t.Errorf("second load = %p, %v; want the same pool %p", again, err, p)
			}
			a, _ := media.Load(filepath.Join(dir, "img/a.png"), 0)
			for i := range p.Len() {
				for _, part := range p.Item(i).Messages[0].Parts {
					if part.Media != nil && filepath.Base(part.Media.Name) == "a.png" && part.Media != a {
						t.Errorf("item %d holds its own copy of a.png, want the process's one item", i+1)
					}
				}
			}
		})
	}
}

func TestLoadMediaErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"missing image", `{"prompt":"x","image":"img/none.png"}`, `d.jsonl:1: record 1: field "image": `},
		{"not an image", `{"prompt":"x","image":"img/a.png"}` + "\n" + `{"prompt":"x","image":"img/fake.png"}`,
			`d.jsonl:2: record 2: field "image": `},
		{"no image field", `{"prompt":"x"}`, `d.jsonl:1: record 1: no field "image" (fields: prompt)`},
		{"image a number", `{"prompt":"x","image":3}`, `field "image" is a number, want a path or a list of paths`},
		{"empty list", `{"prompt":"x","image":[]}`, `field "image": no image`},
		{"no prompt", `{"image":"img/a.png"}`, `no "conversations", "messages" or "prompt"`},
		{"not an object", `[1]`, `record 1: is a number, want an object with "image"`},
		{"no records", ``, `no prompts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mediaFixture(t)
			path := filepath.Join(dir, "d.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadMedia(context.Background(), path, MediaOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadMediaBound(t *testing.T) {
	dir := mediaFixture(t)
	path := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(path, []byte(`{"prompt":"x","image":"img/b.jpg"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadMedia(context.Background(), path, MediaOptions{MaxBytes: 100})
	if err == nil || !strings.Contains(err.Error(), "larger than the bound") {
		t.Errorf("err = %v, want the size bound", err)
	}
}

func TestChoice(t *testing.T) {
	c, err := NewChoice([]float64{10, 20, 30}, []float64{1, 0.0001, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := map[float64]int{}
	for range 4000 {
		n[c.Draw(r)]++
	}
	if n[10] < 800 || n[10] > 1200 || n[30] < 2800 || n[30] > 3200 || n[20] > 5 {
		t.Errorf("draws = %v, want about 1000 of 10, 3000 of 30, almost no 20", n)
	}
	if got, want := c.String(), "choice(10:1, 20:0.0001, 30:3)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for _, tt := range []struct {
		values, weights []float64
		want            string
	}{
		{nil, nil, "at least one value"},
		{[]float64{1}, []float64{1, 2}, "2 weights for 1 values"},
		{[]float64{1}, []float64{0}, "weight 1 is 0"},
		{[]float64{-1}, nil, "value 1 -1 is negative"},
	} {
		if _, err := NewChoice(tt.values, tt.weights, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewChoice(%v, %v) = %v, want %q", tt.values, tt.weights, err, tt.want)
		}
	}
}

func TestImageParts(t *testing.T) {
	a := media.Raw("a.png", media.Info{Kind: media.Image}, nil)
	b := media.Raw("b.png", media.Info{Kind: media.Image}, nil)
	tests := []struct {
		text   string
		images []*media.Item
		want   string
	}{
		{"What?", []*media.Item{a}, "image(a.png) text(What?)"},
		{"<image>\nWhat?", []*media.Item{a}, "image(a.png) text(What?)"},
		{"Left <image> right <image> end", []*media.Item{a, b}, "text(Left) image(a.png) text(right) image(b.png) text(end)"},
		{"<image> only one placeholder", []*media.Item{a, b}, "image(b.png) image(a.png) text(only one placeholder)"},
		{"<image> <image> more placeholders", []*media.Item{a}, "image(a.png) text(more placeholders)"},
		{"<image>", []*media.Item{a}, "image(a.png)"},
	}
	for _, tt := range tests {
		parts := ImageParts(tt.text, tt.images)
		if got := partsString(parts); got != tt.want {
			t.Errorf("ImageParts(%q) = %s, want %s", tt.text, got, tt.want)
		}
		if cap(parts) != len(parts) {
			t.Errorf("ImageParts(%q): capacity %d beyond length %d: an append would write into shared memory", tt.text, cap(parts), len(parts))
		}
	}
}

// Audio datasets: records name audio files (Qwen-Audio's <audio>
// placeholder, or a speech corpus's records with no prompt at all), each
// file read once per process; an image where audio is wanted is refused
// naming the line.
func TestLoadMediaAudio(t *testing.T) {
	dir := mediaFixture(t)
	clip, err := media.SynthAudio(media.AudioSpec{Seconds: 0.5, SampleRate: 8000}, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.wav"), clip.Data(), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, content string
		opts          MediaOptions
		want          []string
		err           string
	}{
		{"placeholder", `{"prompt":"<audio> What is said?","audio":"a.wav"}`, MediaOptions{Kind: media.Audio},
			[]string{"audio(a.wav) text(What is said?)"}, ""},
		{"speech corpus", `{"audio":"a.wav","text":"hello there"}` + "\n" + `{"audio":["a.wav","a.wav"],"text":"twice"}`,
			MediaOptions{Kind: media.Audio}, []string{"audio(a.wav)", "audio(a.wav) audio(a.wav)"}, ""},
		{"named field", `{"q":"Transcribe","clip":"a.wav"}`, MediaOptions{Kind: media.Audio, Field: "q", MediaField: "clip"},
			[]string{"audio(a.wav) text(Transcribe)"}, ""},
		{"an image as audio", `{"audio":"a.wav"}` + "\n" + `{"audio":"img/a.png"}`, MediaOptions{Kind: media.Audio}, nil,
			`d.jsonl:2: record 2: field "audio": img/a.png: a png file, not audio`},
		{"audio as an image", `{"prompt":"x","image":"a.wav"}`, MediaOptions{}, nil,
			`d.jsonl:1: record 1: field "image": a.wav: a wav file, not an image`},
		{"no audio field", `{"prompt":"x"}`, MediaOptions{Kind: media.Audio}, nil, `d.jsonl:1: record 1: no field "audio" (fields: prompt)`},
		{"empty list", `{"audio":[]}`, MediaOptions{Kind: media.Audio}, nil, `field "audio": no audio`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.jsonl")
			if err := os.Symlink(filepath.Join(dir, "a.wav"), filepath.Join(filepath.Dir(path), "a.wav")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, "img"), filepath.Join(filepath.Dir(path), "img")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := LoadMedia(context.Background(), path, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != len(tt.want) {
				t.Fatalf("%d items, want %d", p.Len(), len(tt.want))
			}
			for i, w := range tt.want {
				if got := partsString(p.Item(i).Messages[0].Parts); got != w {
					t.Errorf("item %d = %s, want %s", i+1, got, w)
				}
			}
		})
	}
}
