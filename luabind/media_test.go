package luabind

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/luabind/api"
)

// mediaDir writes a script and the media files it names into one
// directory: images/a.png, images/b.jpg, speech.wav (and voice/speech.wav),
// clips/broken.wav (a cut header), notimage.png (text),
// and a LLaVA dataset llava.json naming images/a.png.
func mediaDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	png, err := media.SynthImage(media.ImageSpec{Width: 32, Height: 16, Format: "png"}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	jpg, err := media.SynthImage(media.ImageSpec{Width: 24, Height: 24, Format: "jpeg"}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	wav, err := media.SynthAudio(media.AudioSpec{Seconds: 0.5}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	write("images/a.png", png.Data())
	write("images/b.jpg", jpg.Data())
	write("speech.wav", wav.Data())
	write("voice/speech.wav", wav.Data())
	write("clips/broken.wav", wav.Data()[:20]) // a RIFF header cut before its fmt chunk
	write("notimage.png", []byte("hello, not an image"))
	write("empty/readme.txt", []byte("no images here"))
	write("llava.json", []byte(`[{"id":"1","image":"images/a.png","conversations":[`+
		`{"from":"human","value":"<image>\nWhat is shown?"},{"from":"gpt","value":"noise"}]}]`))
	write("s.lua", []byte(src))
	return filepath.Join(dir, "s.lua")
}

const mediaHeader = "local llm = require(\"llmload\")\noptions = { vus = 1, duration = \"1s\" }\n"

func mediaVU(t *testing.T, src string, seed int64, id int) (*fakeClient, func(exec string) error) {
	t.Helper()
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{Seed: seed})
	client := &fakeClient{result: engine.Result{Status: 200}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, id)
	return client, func(exec string) error { return run(t, v, exec) }
}

func TestContentParts(t *testing.T) {
	src := `local img = llm.synthetic.image{ width = 64, height = 32, format = "png", variants = 4 }
local pool = llm.images{ dir = "images" }
function iteration()
  llm.chat{ messages = {
    { role = "system", content = "plain" },
    { role = "user", content = {
      { type = "text", text = "describe" },
      { type = "image", image = img, count = 3 },
      { type = "image", path = "images/a.png", detail = "low" },
      { type = "image", url = "https://example.com/x.jpg", detail = "high" },
      { type = "image", pool = pool, count = 2 },
      { type = "audio", path = "speech.wav", format = "wav" },
      { type = "video", url = "https://example.com/v.mp4" },
    } },
  } }
end
`
	client, run := mediaVU(t, src, 7, 1)
	if err := run("iteration"); err != nil {
		t.Fatal(err)
	}
	req := client.requests()[0]
	if req.Messages[0].Content != "plain" || req.Messages[0].Parts != nil {
		t.Errorf("string content = %+v, want it kept as Content", req.Messages[0])
	}
	parts := req.Messages[1].Parts
	types := make([]string, len(parts))
	for i, p := range parts {
		types[i] = p.Type
	}
	want := "text image image image image image image image audio video"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("part types = %s, want %s", got, want)
	}
	seen := map[*media.Item]bool{}
	for _, p := range parts[1:4] {
		if p.Media == nil || p.Media.Width != 64 || p.Media.Height != 32 || p.Media.Format != "png" {
			t.Fatalf("synthetic part = %+v, want a 64x32 png", p.Media)
		}
		seen[p.Media] = true
	}
	if len(seen) != 3 {
		t.Errorf("count = 3 gave %d distinct images, want 3", len(seen))
	}
	if p := parts[4]; p.Media == nil || !strings.HasSuffix(p.Media.Name, "a.png") || p.Detail != "low" {
		t.Errorf("path part = %+v (%v), want images/a.png with detail low", p, p.Media)
	}
	if p := parts[5]; p.URL != "https://example.com/x.jpg" || p.Media != nil || p.Detail != "high" {
		t.Errorf("url part = %+v", p)
	}
	if a, b := parts[6].Media, parts[7].Media; a == nil || b == nil || a == b {
		t.Errorf("pool parts = %v, %v, want the pool's two images in turn", a, b)
	}
	if p := parts[8]; p.Media == nil || p.Media.Format != "wav" {
		t.Errorf("audio part = %+v", p)
	}
	if p := parts[9]; p.URL != "https://example.com/v.mp4" {
		t.Errorf("video part = %+v", p)
	}
}

// TestMediaShared: the items of a file and of a synthetic spec are the
// same *media.Item in every VU, and the run seed decides the synthetic
// bytes.
func TestMediaShared(t *testing.T) {
	src := `local img = llm.synthetic.image{ width = 48, height = 48, variants = 1 }
function iteration()
  llm.chat{ messages = { { role = "user", content = {
    { type = "image", image = img },
    { type = "image", path = "images/b.jpg" },
    { type = "image", synthetic = { width = 40, height = 20, variants = 1 } },
  } } } }
end
`
	dir := filepath.Dir(mediaDir(t, mediaHeader+src))
	items := func(seed int64, id int) []*media.Item {
		s := mustCompile(t, filepath.Join(dir, "s.lua"), Options{Seed: seed})
		client := &fakeClient{result: engine.Result{Status: 200}}
		v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, id)
		mustRun(t, v, "iteration")
		mustRun(t, v, "iteration")
		reqs := client.requests()
		var out []*media.Item
		for i, p := range reqs[0].Messages[0].Parts {
			if reqs[1].Messages[0].Parts[i].Media != p.Media {
				t.Errorf("part %d: a second request sent another item", i+1)
			}
			out = append(out, p.Media)
		}
		return out
	}
	a, b := items(11, 1), items(11, 2)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("part %d: VU 1 and VU 2 hold different items (%p, %p), want one shared", i+1, a[i], b[i])
		}
	}
	c := items(12, 1)
	if bytes.Equal(a[0].Data(), c[0].Data()) || bytes.Equal(a[2].Data(), c[2].Data()) {
		t.Error("seeds 11 and 12 made the same synthetic image")
	}
	if a[1] != c[1] {
		t.Error("a file's item differs between seeds")
	}
}

func TestSyntheticSizes(t *testing.T) {
	src := `local sizes = llm.dist.choice{ {64, 64}, {32, 16}, weights = {3, 1} }
local img = llm.synthetic.image{ size = sizes, variants = 2 }
function iteration()
  llm.chat{ messages = { { role = "user", content = { { type = "image", image = img, count = 2 } } } } }
end
`
	client, run := mediaVU(t, src, 3, 1)
	for range 40 {
		if err := run("iteration"); err != nil {
			t.Fatal(err)
		}
	}
	n := map[[2]int]int{}
	for _, r := range client.requests() {
		for _, p := range r.Messages[0].Parts {
			n[[2]int{p.Media.Width, p.Media.Height}]++
		}
	}
	if len(n) != 2 || n[[2]int{64, 64}] <= n[[2]int{32, 16}] {
		t.Errorf("sizes drawn = %v, want both, 64x64 about three times as often", n)
	}
}

func TestDatasetContent(t *testing.T) {
	src := `local pool = llm.images{ dataset = "llava.json" }
out = {}
function iteration()
  local item = pool:next()
  out.text, out.images = item.text, item.images
  llm.chat{ messages = { { role = "user", content = item } } }
  llm.respond{ input = { { role = "user", content = { item, { type = "text", text = "briefly" } } } } }
end
`
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{})
	client := &fakeClient{result: engine.Result{Status: 200}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, 1)
	mustRun(t, v, "iteration")
	reqs := client.requests()
	parts := reqs[0].Messages[0].Parts
	if len(parts) != 2 || parts[0].Type != engine.PartImage || parts[0].Media.Width != 32 ||
		parts[1].Type != engine.PartText || parts[1].Text != "What is shown?" {
		t.Errorf("dataset content = %+v, want the image then the text without its placeholder", parts)
	}
	if got := len(reqs[1].Messages[0].Parts); got != 3 {
		t.Errorf("spliced content has %d parts, want 3", got)
	}
	if got := out(t, v, "text").String(); got != "What is shown?" {
		t.Errorf("item.text = %q", got)
	}
	if got := out(t, v, "images").String(); got != "1" {
		t.Errorf("item.images = %s, want 1", got)
	}
}

// An audio dataset: its records as contents of a chat (the audio where
// the prompt says <audio>), and as llm.transcribe's audio, each record's
// clip in turn.
func TestAudioDataset(t *testing.T) {
	src := `local speech = llm.audio{ dataset = "speech.jsonl" }
local asked = llm.audio{ dataset = "asked.jsonl", field = "q", audio_field = "clip" }
out = {}
function iteration()
  local item = asked:next()
  out.text, out.audios, out.images = item.text, item.audios, item.images
  llm.chat{ messages = { { role = "user", content = item } } }
  llm.transcribe{ audio = speech }
  llm.transcribe{ audio = { pool = speech } }
end
`
	dir := filepath.Dir(mediaDir(t, ""))
	path := filepath.Join(dir, "s.lua")
	for name, data := range map[string]string{
		"s.lua":        mediaHeader + src,
		"speech.jsonl": `{"audio":"speech.wav","text":"first"}` + "\n" + `{"audio":"voice/speech.wav","text":"second"}` + "\n",
		"asked.jsonl":  `{"q":"What is said? <audio>","clip":"speech.wav"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := mustCompile(t, path, Options{})
	client := &fakeClient{result: engine.Result{Status: 200}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, 1)
	mustRun(t, v, "iteration")
	reqs := client.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	parts := reqs[0].Messages[0].Parts
	if len(parts) != 2 || parts[0].Type != engine.PartText || parts[0].Text != "What is said?" ||
		parts[1].Type != engine.PartAudio || parts[1].Media.Seconds != 0.5 {
		t.Errorf("dataset content = %+v, want the text then the audio where its placeholder was", parts)
	}
	a, b := reqs[1].Audio, reqs[2].Audio
	if a == nil || b == nil || a == b || filepath.Base(a.Name) != "speech.wav" || filepath.Base(b.Name) != "speech.wav" {
		t.Errorf("transcriptions sent %v and %v, want the two records' clips in turn", a, b)
	}
	for k, want := range map[string]string{"text": "What is said?", "audios": "1", "images": "0"} {
		if got := out(t, v, k).String(); got != want {
			t.Errorf("item.%s = %s, want %s", k, got, want)
		}
	}
}

func TestSpeechRequests(t *testing.T) {
	src := `local voice = llm.synthetic.audio{ seconds = 1, sample_rate = 8000, variants = 2 }
local clips = llm.audio{ dir = "voice" }
function iteration()
  llm.transcribe{ audio = "speech.wav", language = "en", prompt = "names", model = "whisper", tags = { k = "v" } }
  llm.transcribe{ audio = voice, stream = false }
  llm.transcribe{ audio = { pool = clips, format = "wav" } }
  llm.speak{ input = "hello there", voice = "nova", format = "mp3", model = "tts" }
end
`
	client, run := mediaVU(t, src, 1, 1)
	if err := run("iteration"); err != nil {
		t.Fatal(err)
	}
	reqs := client.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	r := reqs[0]
	if r.Endpoint != engine.EndpointTranscriptions || r.Audio == nil || r.Audio.Format != "wav" || r.Language != "en" ||
		r.Prompt != "names" || r.Model != "whisper" || r.NoStream || r.Tags["k"] != "v" {
		t.Errorf("transcribe = %+v", r)
	}
	if r := reqs[1]; !r.NoStream || r.Audio == nil || r.Audio.SampleRate != 8000 || r.Model != "m" {
		t.Errorf("synthetic transcribe = %+v (%+v)", r, r.Audio)
	}
	if r := reqs[2]; r.Audio == nil || !strings.HasSuffix(r.Audio.Name, "speech.wav") {
		t.Errorf("pool transcribe = %+v", r.Audio)
	}
	if r := reqs[3]; r.Endpoint != engine.EndpointSpeech || r.Prompt != "hello there" || r.Voice != "nova" ||
		r.AudioFormat != "mp3" || r.Model != "tts" {
		t.Errorf("speak = %+v", r)
	}
}

func TestMediaResultFields(t *testing.T) {
	src := `out = {}
function iteration()
  local r = llm.speak{ input = "hi" }
  out.seconds, out.bytes, out.rtf, out.images, out.upload = r.audio_seconds, r.audio_bytes, r.rtf, r.images, r.upload_ms
end
`
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{})
	client := &fakeClient{result: engine.Result{Status: 200, AudioOut: 2, AudioBytes: 64000, E2E: 1e9, Images: 2, Upload: 3e6}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, 1)
	mustRun(t, v, "iteration")
	for key, want := range map[string]string{"seconds": "2", "bytes": "64000", "rtf": "2", "images": "2", "upload": "3"} {
		if got := out(t, v, key).String(); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
}

// TestMediaErrors: every bad part is a Lua error at the script's line
// naming the field.
func TestMediaErrors(t *testing.T) {
	big := strings.Repeat("x", 2048)
	tests := []struct {
		name, call, want string
	}{
		{"missing file", `llm.chat{ messages = { { role = "user", content = { { type = "image", path = "nope" .. ".png" } } } } }`,
			"llm.chat.messages[1].content[1].path: " + "%DIR%/nope.png: no such file"},
		{"not an image", `llm.chat{ messages = { { role = "user", content = { { type = "image", path = "notimage" .. ".png" } } } } }`,
			"llm.chat.messages[1].content[1].path: %DIR%/notimage.png: not an image"},
		{"audio as image", `llm.chat{ messages = { { role = "user", content = { { type = "image", path = "speech" .. ".wav" } } } } }`,
			"content[1].path: %DIR%/speech.wav: a wav file, not image"},
		{"too large", `llm.chat{ messages = { { role = "user", content = { { type = "image", path = "images/a" .. ".png", max_bytes = 10 } } } } }`,
			"content[1].path: %DIR%/images/a.png: 1.2 KB is larger than the bound of 10 B"},
		{"data not media", `llm.chat{ messages = { { role = "user", content = { { type = "image", data = "` + big + `" } } } } }`,
			"content[1].data: data (2.0 KB): not an image"},
		{"unknown type", `llm.chat{ messages = { { role = "user", content = { { type = "pic" .. "ture", path = "a.png" } } } } }`,
			`content[1].type: unknown part type "picture" (known: text, image, audio, video)`},
		{"two sources", `llm.chat{ messages = { { role = "user", content = { { type = "image", path = "images/a.png", url = "https://x/y.png" } } } } }`,
			"content[1].url: a part has one source, and this one names path and url"},
		{"no source", `llm.chat{ messages = { { role = "user", content = { { type = "image", detail = "low" } } } } }`,
			"llm.chat.messages[1].content[1]: an image part needs one source: path, data, url, synthetic, pool, image"},
		{"bad detail", `llm.chat{ messages = { { role = "user", content = { { type = "image", url = "https://x/y", detail = "max" } } } } }`,
			`content[1].detail: "max" is not a detail (low, high, auto)`},
		{"zero width", `llm.chat{ messages = { { role = "user", content = { { type = "image", synthetic = { width = tonumber("0"), height = 10 } } } } } }`,
			"content[1].synthetic: width = 0"},
		{"huge side", `llm.chat{ messages = { { role = "user", content = { { type = "image", synthetic = { width = tonumber("100000"), height = 10 } } } } } }`,
			"content[1].synthetic: width = 100000"},
		{"unreadable audio header", `llm.chat{ messages = { { role = "user", content = { { type = "audio", path = "clips/broken" .. ".wav" } } } } }`,
			"content[1].path: %DIR%/clips/broken.wav: "},
		{"pool format mismatch", `llm.chat{ messages = { { role = "user", content = { { type = "audio", pool = llm.audio{ dir = "voice" }, format = "mp3" } } } } }`,
			`content[1].format: format = "mp3", but the pool is wav`},
		{"format mismatch", `llm.chat{ messages = { { role = "user", content = { { type = "audio", path = "speech.wav", format = "mp3" } } } } }`,
			`content[1].format: format = "mp3", but %DIR%/speech.wav is wav`},
		{"audio in messages", `llm.messages{ max_tokens = 5, messages = { { role = "user", content = { { type = "audio", path = "speech.wav" } } } } }`,
			"llm.messages.messages[1].content[1].type: llm.messages: an audio part: Anthropic's Messages API has no audio input"},
		{"video in responses", `llm.respond{ input = { { role = "user", content = { { type = "video", url = "https://x/v.mp4" } } } } }`,
			"llm.respond.input[1].content[1].type: llm.respond: a video part: the Responses API has no video input"},
		{"image in complete", `llm.complete{ prompt = { { type = "image", path = "images/a.png" } } }`,
			"llm.complete.prompt: the completions API is text-only"},
		{"image in embed", `llm.embed{ input = { { type = "image", path = "images/a.png" } } }`,
			"llm.embed.input[1]: the embeddings API is text-only"},
		{"transcribe bad audio", `llm.transcribe{ audio = "notimage" .. ".png" }`,
			"llm.transcribe.audio.path: %DIR%/notimage.png: not an image, audio or video file"},
		{"transcribe an image", `llm.transcribe{ audio = "images/a" .. ".png" }`,
			"llm.transcribe.audio.path: %DIR%/images/a.png: a png file, not audio"},
		{"speak without input", `llm.speak{ voice = "x" }`, "llm.speak.input: required"},
		{"speak format", `llm.speak{ input = "x", format = "midi" }`, `llm.speak.format: "midi" is not a speech format`},
		{"pool kind", `llm.transcribe{ audio = { pool = llm.images{ dir = "images" } } }`, "llm.transcribe.audio.pool: a pool of image, not audio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mediaDir(t, mediaHeader+"function iteration()\n  "+tt.call+"\nend\n")
			s := mustCompile(t, path, Options{})
			v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{result: engine.Result{Status: 200}}, Sink: &fakeSink{}, Model: "m"}, 1)
			err := run(t, v, "iteration")
			want := "s.lua:4: " + strings.ReplaceAll(tt.want, "%DIR%", filepath.Dir(path))
			if err == nil || !strings.Contains(err.Error(), "s.lua:4: ") || !strings.Contains(err.Error(), strings.TrimPrefix(want, "s.lua:4: ")) {
				t.Errorf("err = %v\nwant it to contain %q", err, want)
			}
		})
	}
}

// TestMediaInitErrors: a bad pool or synthetic spec fails the compile,
// before any load, naming the script's line and the field.
func TestMediaInitErrors(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"empty dir", `llm.images{ dir = "empty" }`, "llm.images: dir: %DIR%/empty: no image files in it"},
		{"unreadable audio in a dir", `llm.audio{ dir = "clips" }`, "llm.audio: dir: %DIR%/clips/broken.wav: "},
		{"missing dir", `llm.audio{ dir = "nowhere" }`, "llm.audio: dir: %DIR%/nowhere: no such directory"},
		{"audio dataset missing", `llm.audio{ dataset = "none.jsonl" }`, "llm.audio: dataset: "},
		{"audio field of a dir", `llm.audio{ dir = "voice", audio_field = "clip" }`, "llm.audio: field and audio_field are a dataset's options"},
		{"image field of audio", `llm.audio{ dataset = "d.jsonl", image_field = "clip" }`, "llm.audio.image_field: unknown key (valid keys: audio_field, dataset, dir, field, max_bytes)"},
		{"no audio source", `llm.audio{ max_bytes = 5 }`, `llm.audio: needs dir = "path" or dataset = "file"`},
		{"no source", `llm.images{ max_bytes = 5 }`, `llm.images: needs dir = "path" or dataset = "file"`},
		{"missing dataset", `llm.images{ dataset = "none.jsonl" }`, "llm.images: dataset: "},
		{"zero pixels", `llm.synthetic.image{ width = 0, height = 8 }`, "llm.synthetic.image: width = 0"},
		{"100000 pixels", `llm.synthetic.image{ width = 8, height = 100000 }`, "llm.synthetic.image: height = 100000"},
		{"size choice", `llm.synthetic.image{ size = llm.dist.choice{ {8, 8}, {0, 8} } }`, "llm.synthetic.image.size[2]: width = 0"},
		{"audio seconds", `llm.synthetic.audio{ sample_rate = 8000 }`, "llm.synthetic.audio.seconds: required"},
		{"mixed choice", `llm.dist.choice{ 1, {2, 3} }`, "llm.dist.choice: values are all numbers or all {w, h} pairs"},
		{"choice weights", `llm.dist.choice{ 1, 2, weights = { 1 } }`, "llm.dist.choice: choice: 1 weights for 2 values"},
		{"pair as length", `llm.synthetic{ input_tokens = llm.dist.choice{ {1, 2} }, output_tokens = llm.dist.fixed(1) }`,
			"llm.synthetic.input_tokens: expected a distribution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mediaDir(t, mediaHeader+tt.code+"\nfunction iteration() end\n")
			_, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }})
			want := strings.ReplaceAll(tt.want, "%DIR%", filepath.Dir(path))
			if err == nil || !strings.Contains(err.Error(), "s.lua:3: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant it to name s.lua:3 and contain %q", err, want)
			}
		})
	}
}

// TestSyntheticPromptsStillCallable: llm.synthetic{...} makes prompts as
// before, beside .image and .audio.
func TestSyntheticPromptsStillCallable(t *testing.T) {
	src := `local gen = llm.synthetic{ input_tokens = llm.dist.choice{ 8, 16 }, output_tokens = llm.dist.fixed(4) }
out = {}
function iteration() out.n = gen:next().max_tokens end
`
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{})
	v := newVU(t, s, api.RunnerConfig{Client: &fakeClient{}, Sink: &fakeSink{}, Model: "m"}, 1)
	mustRun(t, v, "iteration")
	if got := out(t, v, "n").String(); got != "4" {
		t.Errorf("max_tokens = %s, want 4", got)
	}
}

// TestMediaCompileErrors: a part whose type and path the source spells
// out is checked at Compile, before the iterations ever run.
func TestMediaCompileErrors(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"missing file", `{ type = "image", path = "cat.jpg" }`, "s.lua:4: image part: path: %DIR%/cat.jpg: no such file"},
		{"not an image", `{ type = "image", path = "notimage.png" }`, "s.lua:4: image part: path: %DIR%/notimage.png: not an image"},
		{"audio as image", `{ type = "image", path = "speech.wav" }`, "s.lua:4: image part: path: speech.wav: a wav file, not image"},
		{"image as audio", `{ type = "audio", path = "images/a.png" }`, "s.lua:4: audio part: path: images/a.png: a png file, not audio"},
		{"too large", `{ type = "image", path = "images/a.png", max_bytes = 10 }`, "s.lua:4: image part: path: %DIR%/images/a.png: "},
		{"unknown type", `{ type = "picture", url = "https://x/y.png" }`, `s.lua:4: content part: type: unknown part type "picture"`},
		{"zero pixels", `{ type = "image", synthetic = { width = 0, height = 64 } }`, "s.lua:4: image part: synthetic: width = 0"},
		{"100000 pixels", `{ type = "image", synthetic = { width = 64, height = 100000 } }`, "s.lua:4: image part: synthetic: height = 100000"},
		{"no seconds", `{ type = "audio", synthetic = { seconds = 0 } }`, "s.lua:4: audio part: synthetic: seconds = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mediaDir(t, mediaHeader+"function iteration()\n  llm.chat{ messages = { { role = \"user\", content = { "+
				tt.code+" } } }, max_tokens = 1 }\nend\n")
			_, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }})
			want := strings.ReplaceAll(tt.want, "%DIR%", filepath.Dir(path))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant it to contain %q", err, want)
			}
		})
	}
	path := mediaDir(t, mediaHeader+"function iteration()\n  llm.transcribe{ audio = \"nope.wav\" }\nend\n")
	_, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }})
	if want := "s.lua:4: audio part: path: " + filepath.Dir(path) + "/nope.wav: no such file"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("llm.transcribe: err = %v\nwant it to contain %q", err, want)
	}
	// A tool's {type = "function"} is no content part.
	path = mediaDir(t, mediaHeader+`function iteration()
  llm.chat{ messages = { { role = "user", content = "x" } }, tools = { { type = "function", ["function"] = { name = "f" } } } }
end
`)
	if _, err := Compile(path, Options{Env: func(string) (string, bool) { return "", false }}); err != nil {
		t.Errorf("a tool table: %v", err)
	}
}

// TestMediaFiles: the files of media pools and datasets, and the literal
// paths of parts, are the script's data files, which travel with it.
func TestMediaFiles(t *testing.T) {
	src := `local imgs = llm.images{ dir = "images" }
local llava = llm.images{ dataset = "llava.json" }
function iteration()
  llm.chat{ messages = { { role = "user", content = { { type = "audio", path = "voice/speech.wav" } } } } }
  llm.transcribe{ audio = "speech.wav" }
end
`
	s := mustCompile(t, mediaDir(t, mediaHeader+src), Options{})
	got := strings.Join(s.Files(), " ")
	if want := "images/a.png images/b.jpg llava.json speech.wav voice/speech.wav"; got != want {
		t.Errorf("Files = %s, want %s", got, want)
	}
}
