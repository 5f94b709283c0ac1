package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine/media"
)

// The formulas, by hand: Qwen2-VL rounds 1024 to 1036 (37×28), whose
// square exceeds 28×28×1280 = 1,003,520 pixels, so it shrinks by
// √(1024²/1,003,520) to 1001.8 px and floors to 980 (35×28): 35² = 1225.
func TestImageTokenFormulas(t *testing.T) {
	tests := []struct {
		formula string
		w, h    int
		want    int
	}{
		{ImageTokensQwen2VL, 1024, 1024, 35 * 35},
		{ImageTokensQwen2VL, 448, 448, 16 * 16},
		{ImageTokensQwen2VL, 28, 28, 2 * 2},       // raised to 56×56
		{ImageTokensQwen2VL, 1920, 1080, 47 * 26}, // 1316×728
		{ImageTokensQwen2VL, 300, 200, 11 * 7},    // 308×196
		{ImageTokensPatch14, 448, 448, 32 * 32},
		{ImageTokensPatch14, 100, 30, 8 * 3},
		{ImageTokensPatch14, 1024, 1024, 72 * 72}, // shrunk to 1001 px: ⌈1001/14⌉ = 72
		{ImageTokensLLaVA, 1024, 1024, 576},
		{ImageTokensLLaVA, 10, 4000, 576},
	}
	for _, tt := range tests {
		if got := imageTokens(tt.formula, tt.w, tt.h); got != tt.want {
			t.Errorf("imageTokens(%s, %d×%d) = %d, want %d", tt.formula, tt.w, tt.h, got, tt.want)
		}
	}
	for _, tt := range []struct {
		seconds float64
		want    int
	}{{3, 6 * 256}, {0, 20 * 256}, {100, 32 * 256}, {0.2, 1 * 256}} {
		if got := videoTokens(ImageTokensQwen2VL, tt.seconds); got != tt.want {
			t.Errorf("videoTokens(%v s) = %d, want %d", tt.seconds, got, tt.want)
		}
	}
	if got, want := audioTokens(2), 50; got != want {
		t.Errorf("audioTokens(2 s) = %d, want %d", got, want)
	}
}

func synthImage(t *testing.T, w, h int, format string) *media.Item {
	t.Helper()
	it, err := media.SyntheticImage(media.ImageSpec{Width: w, Height: h, Format: format}, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func synthAudio(t *testing.T, seconds float64) *media.Item {
	t.Helper()
	it, err := media.SyntheticAudio(media.AudioSpec{Seconds: seconds}, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// mp4 is the smallest mp4 whose movie header says duration/scale seconds:
// an ftyp box, then moov holding a version-0 mvhd.
func mp4(duration, scale uint32) []byte {
	box := func(typ string, body []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
		return append(append(b, typ...), body...)
	}
	mvhd := make([]byte, 100)
	binary.BigEndian.PutUint32(mvhd[12:], scale)
	binary.BigEndian.PutUint32(mvhd[16:], duration)
	return append(box("ftyp", []byte("isom\x00\x00\x02\x00isom")), box("moov", box("mvhd", mvhd))...)
}

// Wire forms of the parts, as the client sends them.
func chatImage(url string) map[string]any {
	return map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}}
}

func chatAudio(it *media.Item, format string) map[string]any {
	return map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": string(it.Base64()), "format": format}}
}

func anthropicImage(it *media.Item) map[string]any {
	return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": it.MIME, "data": string(it.Base64())}}
}

// request is a body of api whose one user message is parts after the
// text "Describe.", or the plain string "Describe." without parts.
func request(t *testing.T, path string, parts ...map[string]any) string {
	t.Helper()
	var content any = "Describe."
	if len(parts) > 0 {
		textType := "text"
		if path == "/v1/responses" {
			textType = "input_text"
		}
		content = append([]map[string]any{{"type": textType, "text": "Describe."}}, parts...)
	}
	msgs := []map[string]any{{"role": "user", "content": content}}
	switch path {
	case "/v1/messages":
		return body(t, map[string]any{"max_tokens": 2, "messages": msgs})
	case "/v1/responses":
		return body(t, map[string]any{"max_output_tokens": 2, "input": msgs})
	}
	return body(t, map[string]any{"max_tokens": 2, "messages": msgs})
}

// promptTokensOf reads the prompt tokens of any API's usage.
func promptTokensOf(t *testing.T, w *http.Response, b []byte) int {
	t.Helper()
	var resp struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			InputTokens  int `json:"input_tokens"`
		} `json:"usage"`
	}
	if w.StatusCode != http.StatusOK || json.Unmarshal(b, &resp) != nil {
		t.Fatalf("status %d: %s", w.StatusCode, b)
	}
	return resp.Usage.PromptTokens + resp.Usage.InputTokens
}

func headerOf(path string) map[string]string {
	if path == "/v1/messages" {
		return anthropicHeader
	}
	return nil
}

// Every part type of every API is accepted, and usage's prompt tokens
// are the text's plus the formula's.
func TestMediaPartsCounted(t *testing.T) {
	png := synthImage(t, 1024, 1024, "png")
	jpeg := synthImage(t, 448, 448, "jpeg")
	wav := synthAudio(t, 2)
	const chat, msgs, resp = "/v1/chat/completions", "/v1/messages", "/v1/responses"
	tests := []struct {
		name, path, formula string
		parts               []map[string]any
		want                int
	}{
		{"chat png data URL", chat, "", []map[string]any{chatImage(png.DataURL())}, 1225},
		{"chat jpeg, llava", chat, ImageTokensLLaVA, []map[string]any{chatImage(jpeg.DataURL())}, 576},
		{"chat jpeg, patch14", chat, ImageTokensPatch14, []map[string]any{chatImage(jpeg.DataURL())}, 1024},
		{"chat https URL, not fetched", chat, "", []map[string]any{chatImage("https://example.com/cat.png")}, 1225},
		{"chat two images", chat, "", []map[string]any{chatImage(png.DataURL()), chatImage(jpeg.DataURL())}, 1225 + 256},
		{"chat wav", chat, "", []map[string]any{chatAudio(wav, "wav")}, 50},
		{"chat mp4 of 3 s", chat, "", []map[string]any{{"type": "video_url", "video_url": map[string]any{"url": "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(mp4(3000, 1000))}}}, 6 * 256},
		{"chat video URL", chat, "", []map[string]any{{"type": "video_url", "video_url": map[string]any{"url": "https://example.com/v.mp4"}}}, 20 * 256},
		{"messages base64 image", msgs, "", []map[string]any{anthropicImage(png)}, 1225},
		{"messages url image", msgs, ImageTokensLLaVA, []map[string]any{{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/a.jpg"}}}, 576},
		{"responses input_image", resp, "", []map[string]any{{"type": "input_image", "image_url": jpeg.DataURL(), "detail": "auto"}}, 256},
		{"responses input_audio", resp, "", []map[string]any{{"type": "input_audio", "input_audio": map[string]any{"data": string(wav.Base64()), "format": "wav"}}}, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(zeroCost(Config{ImageTokens: tt.formula}))
			defer s.Close()
			text := serve(s, http.MethodPost, tt.path, request(t, tt.path), headerOf(tt.path))
			both := serve(s, http.MethodPost, tt.path, request(t, tt.path, tt.parts...), headerOf(tt.path))
			base, got := promptTokensOf(t, text.Result(), text.Body.Bytes()), promptTokensOf(t, both.Result(), both.Body.Bytes())
			if got-base != tt.want {
				t.Errorf("prompt tokens %d with the parts, %d without: the parts count %d, want %d", got, base, got-base, tt.want)
			}
		})
	}
}

// A user message of an image alone is a prompt: it is not blank.
func TestImageOnlyMessage(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	b := body(t, map[string]any{"max_tokens": 1, "messages": []map[string]any{{"role": "user", "content": []map[string]any{chatImage("https://example.com/x.png")}}}})
	if w := serve(s, http.MethodPost, "/v1/chat/completions", b, nil); w.Code != http.StatusOK {
		t.Errorf("an image-only message: %d %s", w.Code, w.Body)
	}
}

// Each media item a vision or speech server refuses gets a 400 naming
// the part and saying why.
func TestMediaRefusals(t *testing.T) {
	png := synthImage(t, 64, 64, "png")
	jpeg := synthImage(t, 64, 64, "jpeg")
	mislabeled, err := media.Mislabeled(1)
	if err != nil {
		t.Fatal(err)
	}
	oversize, err := media.Oversize(200<<10, 1)
	if err != nil {
		t.Fatal(err)
	}
	lying, err := media.LyingHeader(1)
	if err != nil {
		t.Fatal(err)
	}
	wav := synthAudio(t, 1)
	const chat, msgs, resp = "/v1/chat/completions", "/v1/messages", "/v1/responses"
	many := []map[string]any{chatImage(png.DataURL()), chatImage(png.DataURL()), chatImage("https://example.com/3.png")}
	tests := []struct {
		name, path string
		parts      []map[string]any
		want       string
	}{
		{"bad base64", chat, []map[string]any{chatImage(media.BadBase64(png).DataURL())}, "messages[0].content[1]: image_url: invalid base64"},
		{"truncated jpeg", chat, []map[string]any{chatImage(media.Truncated(jpeg).DataURL())}, "messages[0].content[1]: image_url: cannot decode the image: truncated jpeg"},
		{"truncated png", chat, []map[string]any{chatImage(media.Truncated(png).DataURL())}, "cannot decode the image"},
		{"png labelled jpeg", chat, []map[string]any{chatImage(mislabeled.DataURL())}, `declared "image/jpeg" but the data is png`},
		{"zero pixels", chat, []map[string]any{chatImage(media.ZeroPixel().DataURL())}, "cannot decode the image"},
		{"beyond max image bytes", chat, []map[string]any{chatImage(oversize.DataURL())}, "above the limit of 100.0 KB"},
		{"too many images", chat, many, "messages[0].content[3]: image_url: at most 2 images per request"},
		{"bmp", chat, []map[string]any{chatImage("data:image/bmp;base64,Qk0AAAA=")}, `"image/bmp" is not a supported image format`},
		{"not an image", chat, []map[string]any{chatImage("data:image/png;base64,aGVsbG8gd29ybGQ=")}, "the data is not an image file"},
		{"ftp URL", chat, []map[string]any{chatImage("ftp://example.com/x.png")}, "must be http(s) or a base64 data URL"},
		{"no url", chat, []map[string]any{{"type": "image_url", "image_url": map[string]any{}}}, "image_url.url is required"},
		{"flac input_audio", chat, []map[string]any{chatAudio(wav, "flac")}, `format "flac" is not supported; expected wav or mp3`},
		{"wav labelled mp3", chat, []map[string]any{chatAudio(wav, "mp3")}, `declared "mp3" but the data is wav`},
		{"lying wav header", chat, []map[string]any{chatAudio(lying, "wav")}, "cannot decode the audio: unreadable wav header: the data chunk says"},
		{"messages bad base64", msgs, []map[string]any{anthropicImage(media.BadBase64(png))}, "messages[0].content[1]: image: invalid base64"},
		{"messages bmp", msgs, []map[string]any{{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/bmp", "data": "Qk0="}}}, "not a supported image format"},
		{"messages no source", msgs, []map[string]any{{"type": "image"}}, "source: Field required"},
		{"responses truncated", resp, []map[string]any{{"type": "input_image", "image_url": media.Truncated(jpeg).DataURL()}}, "input[0].content[1]: input_image: cannot decode the image"},
		{"responses file_id", resp, []map[string]any{{"type": "input_image", "file_id": "file-1"}}, "file_id is not simulated"},
		{"responses lying audio", resp, []map[string]any{{"type": "input_audio", "input_audio": map[string]any{"data": string(lying.Base64()), "format": "wav"}}}, "cannot decode the audio"},
	}
	s := New(zeroCost(Config{MaxImages: 2, MaxImageBytes: 100 << 10}))
	defer s.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s, http.MethodPost, tt.path, request(t, tt.path, tt.parts...), headerOf(tt.path))
			if msg := errorMessage(w.Body.Bytes()); w.Code != http.StatusBadRequest || !strings.Contains(msg, tt.want) {
				t.Errorf("got %d %s, want 400 containing %q", w.Code, w.Body, tt.want)
			}
		})
	}
}

// errorMessage is the message of an OpenAI or Anthropic error body.
func errorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Message
}

// Image tokens are prefilled as text tokens are: on a fake clock, two
// 1024×1024 images add exactly 2 × 1225 × PrefillPerToken to TTFT.
func TestImagesChargePrefill(t *testing.T) {
	png := synthImage(t, 1024, 1024, "png")
	cfg := Config{PrefillBase: time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodeBase: -1, PrefixCacheTokens: -1}
	stream := func(t *testing.T, images int) time.Duration {
		parts := []map[string]any{}
		for range images {
			parts = append(parts, chatImage(png.DataURL()))
		}
		var req map[string]any
		_ = json.Unmarshal([]byte(request(t, "/v1/chat/completions", parts...)), &req)
		req["stream"] = true
		s := New(cfg)
		defer s.Close()
		return streamInProcess(s, body(t, req)).ttft
	}
	synctest.Test(t, func(t *testing.T) {
		none, one, two := stream(t, 0), stream(t, 1), stream(t, 2)
		for _, tt := range []struct {
			name      string
			got, want time.Duration
		}{{"one image", one - none, 1225 * cfg.PrefillPerToken}, {"two images", two - none, 2 * 1225 * cfg.PrefillPerToken}} {
			if tt.got != tt.want {
				t.Errorf("%s add %v to TTFT %v, want %v", tt.name, tt.got, none, tt.want)
			}
		}
	})
}

// The truth log holds a request's media and body bytes beside its usage.
func TestTruthLogMedia(t *testing.T) {
	var log bytes.Buffer
	s := New(zeroCost(Config{TruthLog: &log}))
	png := synthImage(t, 1024, 1024, "png")
	b := request(t, "/v1/chat/completions", chatImage(png.DataURL()), chatImage("https://example.com/b.jpg"), chatAudio(synthAudio(t, 2), "wav"))
	if w := serve(s, http.MethodPost, "/v1/chat/completions", b, nil); w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	plain := request(t, "/v1/chat/completions")
	serve(s, http.MethodPost, "/v1/chat/completions", plain, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []TruthRecord
	for line := range strings.Lines(log.String()) {
		var r TruthRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	got, text := recs[0], recs[1]
	want := TruthRecord{Images: 2, Audios: 1, AudioSeconds: 2, MediaTokens: 2*1225 + 50, BodyBytes: int64(len(b)),
		PromptTokens: text.PromptTokens + 2*1225 + 50}
	if got.Images != want.Images || got.Audios != want.Audios || got.AudioSeconds != want.AudioSeconds ||
		got.MediaTokens != want.MediaTokens || got.BodyBytes != want.BodyBytes || got.PromptTokens != want.PromptTokens {
		t.Errorf("record %+v, want the media figures of %+v", got, want)
	}
	if text.Images != 0 || text.MediaTokens != 0 || text.BodyBytes != int64(len(plain)) {
		t.Errorf("a text request's record %+v has media figures, or its body bytes are not %d", text, len(plain))
	}
	if strings.Contains(strings.SplitN(log.String(), "\n", 3)[1], "images") {
		t.Errorf("a text request's line names images: %s", strings.SplitN(log.String(), "\n", 3)[1])
	}
}
