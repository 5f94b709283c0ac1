package openai

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// captured is what a test server received.
type captured struct {
	body          []byte
	ctype         string
	contentLength int64
	form          map[string]string
	file          []byte
	fileType      string
}

// capture returns a handler that records each request and answers with
// answer.
func capture(t *testing.T, got chan<- captured, answer http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := captured{ctype: r.Header.Get("Content-Type"), contentLength: r.ContentLength}
		if strings.HasPrefix(c.ctype, "multipart/") {
			if err := r.ParseMultipartForm(32 << 20); err != nil {
				t.Errorf("multipart: %v", err)
			} else {
				c.form = map[string]string{}
				for k, v := range r.MultipartForm.Value {
					c.form[k] = v[0]
				}
				if fh := r.MultipartForm.File["file"]; len(fh) == 1 {
					f, _ := fh[0].Open()
					c.file, _ = io.ReadAll(f)
					c.fileType = fh[0].Header.Get("Content-Type") + " " + fh[0].Filename
				}
			}
		} else {
			c.body, _ = io.ReadAll(r.Body)
		}
		got <- c
		answer(w, r)
	}
}

// chatAnswer streams a short chat answer with usage of prompt tokens.
func chatAnswer(prompt int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a cat\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":2}}\n\n", prompt)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func testImage(t *testing.T, w, h int) *media.Item {
	t.Helper()
	it, err := media.SyntheticImage(media.ImageSpec{Width: w, Height: h}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func testAudio(t *testing.T, seconds float64) *media.Item {
	t.Helper()
	it, err := media.SyntheticAudio(media.AudioSpec{Seconds: seconds}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// dig walks a decoded JSON value by keys and indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestMediaWireForms(t *testing.T) {
	img := testImage(t, 64, 48)
	wav := testAudio(t, 0.5)
	parts := []engine.Part{
		{Type: engine.PartText, Text: "what is this?"},
		{Type: engine.PartImage, Media: img, Detail: "high"},
		{Type: engine.PartImage, URL: "https://example.com/cat.png"},
	}
	withAudio := append(append([]engine.Part{}, parts...), engine.Part{Type: engine.PartAudio, Media: wav})
	for _, tc := range []struct {
		endpoint string
		parts    []engine.Part
		path     string
		check    func(t *testing.T, body any)
	}{
		{engine.EndpointChat, append(withAudio, engine.Part{Type: engine.PartVideo, URL: "https://example.com/v.mp4"}), "/chat/completions",
			func(t *testing.T, b any) {
				c := dig(b, "messages", 0, "content")
				checkEq(t, dig(c, 0, "type"), "text")
				checkEq(t, dig(c, 0, "text"), "what is this?")
				checkEq(t, dig(c, 1, "type"), "image_url")
				checkEq(t, dig(c, 1, "image_url", "url"), img.DataURL())
				checkEq(t, dig(c, 1, "image_url", "detail"), "high")
				checkEq(t, dig(c, 2, "image_url", "url"), "https://example.com/cat.png")
				checkEq(t, dig(c, 2, "image_url", "detail"), nil)
				checkEq(t, dig(c, 3, "type"), "input_audio")
				checkEq(t, dig(c, 3, "input_audio", "data"), string(wav.Base64()))
				checkEq(t, dig(c, 3, "input_audio", "format"), "wav")
				checkEq(t, dig(c, 4, "type"), "video_url")
				checkEq(t, dig(c, 4, "video_url", "url"), "https://example.com/v.mp4")
			}},
		{engine.EndpointMessages, parts, "/messages",
			func(t *testing.T, b any) {
				c := dig(b, "messages", 0, "content")
				checkEq(t, dig(c, 0, "text"), "what is this?")
				checkEq(t, dig(c, 1, "type"), "image")
				checkEq(t, dig(c, 1, "source", "type"), "base64")
				checkEq(t, dig(c, 1, "source", "media_type"), "image/jpeg")
				checkEq(t, dig(c, 1, "source", "data"), string(img.Base64()))
				checkEq(t, dig(c, 2, "source", "type"), "url")
				checkEq(t, dig(c, 2, "source", "url"), "https://example.com/cat.png")
			}},
		{engine.EndpointResponses, withAudio, "/responses",
			func(t *testing.T, b any) {
				c := dig(b, "input", 0, "content")
				checkEq(t, dig(b, "input", 0, "role"), "user")
				checkEq(t, dig(c, 0, "type"), "input_text")
				checkEq(t, dig(c, 1, "type"), "input_image")
				checkEq(t, dig(c, 1, "image_url"), img.DataURL())
				checkEq(t, dig(c, 1, "detail"), "high")
				checkEq(t, dig(c, 2, "image_url"), "https://example.com/cat.png")
				checkEq(t, dig(c, 3, "input_audio", "data"), string(wav.Base64()))
			}},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			got := make(chan captured, 1)
			srv := serve(t, capture(t, got, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != tc.path {
					t.Errorf("path %s, want %s", r.URL.Path, tc.path)
				}
				http.Error(w, `{"error":{"message":"enough"}}`, 400)
			}))
			c := testClient(t, srv.URL, func(c *Config) { c.Tokenizer = TokenizerNone })
			req := &engine.ChatRequest{Endpoint: tc.endpoint, Model: "m", MaxTokens: 8,
				Messages: []engine.Message{{Role: "user", Parts: tc.parts}}}
			res := c.Chat(context.Background(), req)
			cap := <-got
			var body any
			if err := json.Unmarshal(cap.body, &body); err != nil {
				t.Fatalf("body is not JSON: %v\n%.300s", err, cap.body)
			}
			tc.check(t, body)
			if cap.contentLength != int64(len(cap.body)) || res.BodyBytes != int64(len(cap.body)) {
				t.Errorf("Content-Length %d, BodyBytes %d, body %d bytes", cap.contentLength, res.BodyBytes, len(cap.body))
			}
			if res.Images != 2 {
				t.Errorf("Images = %d, want 2", res.Images)
			}
			if bytes.Contains(cap.body, []byte("llmload-media")) {
				t.Error("a placeholder was sent")
			}
		})
	}
}

func checkEq(t *testing.T, got, want any) {
	t.Helper()
	if got != want {
		g := fmt.Sprint(got)
		if len(g) > 80 {
			g = g[:80] + "..."
		}
		w := fmt.Sprint(want)
		if len(w) > 80 {
			w = w[:80] + "..."
		}
		t.Errorf("got %s, want %s", g, w)
	}
}

func TestMediaPartRefused(t *testing.T) {
	wav := testAudio(t, 0.1)
	img := testImage(t, 8, 8)
	for _, tc := range []struct {
		endpoint string
		part     engine.Part
		want     string
	}{
		{engine.EndpointMessages, engine.Part{Type: engine.PartAudio, Media: wav}, "messages[0].content[1]: the Messages API takes no audio parts"},
		{engine.EndpointMessages, engine.Part{Type: engine.PartVideo, URL: "https://x/v.mp4"}, "takes no video parts"},
		{engine.EndpointResponses, engine.Part{Type: engine.PartVideo, URL: "https://x/v.mp4"}, "the Responses API takes no video parts"},
		{engine.EndpointCompletions, engine.Part{Type: engine.PartImage, Media: img}, "completions are text-only"},
		{engine.EndpointChat, engine.Part{Type: "hologram"}, `unknown part type "hologram"`},
	} {
		c := testClient(t, "http://127.0.0.1:9/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
		res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: tc.endpoint, Model: "m",
			Messages: []engine.Message{{Role: "user", Parts: []engine.Part{{Type: engine.PartText, Text: "x"}, tc.part}}}})
		if res.Err == nil || res.Err.Class != engine.ErrInvalidRequest || !strings.Contains(res.Err.Message, tc.want) {
			t.Errorf("%s %s: %v, want invalid_request naming %q", tc.endpoint, tc.part.Type, res.Err, tc.want)
		}
	}
}

func TestMediaTokensAndBadBase64(t *testing.T) {
	img := testImage(t, 32, 32)
	bad := media.BadBase64(img)
	got := make(chan captured, 1)
	srv := serve(t, capture(t, got, chatAnswer(1000)))
	c := testClient(t, srv.URL) // the default tokenizer counts the text
	text := "describe both images"
	res := c.Chat(context.Background(), &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user",
		Parts: []engine.Part{{Type: engine.PartText, Text: text}, {Type: engine.PartImage, Media: img}, {Type: engine.PartImage, Media: bad}}}}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	cap := <-got
	n, _ := c.tok.count(text)
	if res.InputTokens != 1000 || res.MediaTokens != 1000-n || n == 0 {
		t.Errorf("InputTokens %d MediaTokens %d, want 1000 and %d", res.InputTokens, res.MediaTokens, 1000-n)
	}
	if !bytes.Contains(cap.body, bad.Base64()) || !bytes.Contains(cap.body, img.Base64()) {
		t.Error("the bad base64 or the good one was not sent as it is")
	}
	if res.Encode <= 0 || res.Upload < 0 {
		t.Errorf("Encode %v Upload %v", res.Encode, res.Upload)
	}
}

func TestPayloadResendsWhole(t *testing.T) {
	img := testImage(t, 16, 16)
	req := &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user",
		Parts: []engine.Part{{Type: engine.PartImage, Media: img}, {Type: engine.PartText, Text: "x"}, {Type: engine.PartImage, Media: img}}}}}
	c := testClient(t, "http://127.0.0.1:9/v1")
	p, err := c.payload(chatDialect{}, req)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := io.ReadAll(p.reader())
	var b bytes.Buffer
	_, _ = p.reader().(io.WriterTo).WriteTo(&b)
	if !bytes.Equal(a, b.Bytes()) || int64(len(a)) != p.n || !json.Valid(a) {
		t.Fatalf("readers disagree or the body is not its length (%d, %d, %d) or not JSON", len(a), b.Len(), p.n)
	}
	if bytes.Count(a, img.Base64()) != 2 {
		t.Error("the image is not in the body twice")
	}
}

func TestUploadBeforeTTFT(t *testing.T) {
	// A 5 MB body to a server that waits before reading it: the upload
	// lasts at least that wait, and TTFT holds it.
	over, err := media.Oversize(5<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	const wait = 300 * time.Millisecond
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(wait)
		_, _ = io.Copy(io.Discard, r.Body)
		chatAnswer(10)(w, r)
	}))
	c := testClient(t, srv.URL, func(c *Config) { c.Tokenizer = TokenizerNone })
	res := c.Chat(context.Background(), &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user",
		Parts: []engine.Part{{Type: engine.PartImage, Media: over}}}}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Upload < wait/2 || res.TTFT < res.Upload || res.BodyBytes < 5<<20 {
		t.Errorf("Upload %v TTFT %v BodyBytes %d: want an upload of at least %v within TTFT", res.Upload, res.TTFT, res.BodyBytes, wait/2)
	}
}

func TestTranscriptions(t *testing.T) {
	wav := testAudio(t, 1.5)
	openaiStream := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{"Hello", " world", "."} {
			fmt.Fprintf(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":%q}\n\n", d)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Fprint(w, `data: {"type":"transcript.text.done","text":"Hello world.","usage":{"type":"tokens","input_tokens":38,"input_token_details":{"audio_tokens":38},"output_tokens":4,"total_tokens":42}}`+"\n\n")
	}
	vllmStream := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"transcription.chunk","choices":[{"delta":{"content":"Hello"}}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"x","object":"transcription.chunk","choices":[{"delta":{"content":" world."},"finish_reason":"stop"}],"usage":{"prompt_tokens":38,"completion_tokens":4}}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
	whole := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":"Hello world.","usage":{"type":"tokens","input_tokens":38,"output_tokens":4,"total_tokens":42}}`)
	}
	for _, tc := range []struct {
		name     string
		noStream bool
		answer   http.HandlerFunc
		events   int
	}{
		{"openai stream", false, openaiStream, 3},
		{"vllm stream", false, vllmStream, 2},
		{"whole", true, whole, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan captured, 1)
			srv := serve(t, capture(t, got, tc.answer))
			c := testClient(t, srv.URL)
			res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "whisper",
				Audio: wav, Language: "en", NoStream: tc.noStream})
			cap := <-got
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if !bytes.Equal(cap.file, wav.Data()) || cap.fileType != "audio/wav audio.wav" {
				t.Errorf("file %d bytes (%s), want the wav's %d", len(cap.file), cap.fileType, wav.Size())
			}
			wantStream := fmt.Sprint(!tc.noStream)
			if cap.form["model"] != "whisper" || cap.form["language"] != "en" || cap.form["stream"] != wantStream || cap.form["response_format"] != "json" {
				t.Errorf("form %v", cap.form)
			}
			if res.Text != "Hello world." || res.TextEvents != tc.events || res.InputTokens != 38 || res.OutputTokens != 4 {
				t.Errorf("text %q events %d in %d out %d", res.Text, res.TextEvents, res.InputTokens, res.OutputTokens)
			}
			if res.MediaTokens != 38 || res.Audios != 1 || res.AudioIn != 1.5 || res.BodyBytes != cap.contentLength {
				t.Errorf("MediaTokens %d Audios %d AudioIn %g BodyBytes %d (Content-Length %d)", res.MediaTokens, res.Audios, res.AudioIn, res.BodyBytes, cap.contentLength)
			}
			if !tc.noStream && (res.TTFT <= 0 || res.E2E < res.TTFT) {
				t.Errorf("TTFT %v E2E %v", res.TTFT, res.E2E)
			}
		})
	}
	c := testClient(t, "http://127.0.0.1:9/v1")
	if res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "w"}); res.Err == nil ||
		res.Err.Class != engine.ErrInvalidRequest || !strings.Contains(res.Err.Message, "needs audio") {
		t.Errorf("no audio: %v", res.Err)
	}
}

// wavHead is a 44-byte PCM16 mono header at rate whose data chunk says n
// bytes.
func wavHead(rate, n int) []byte {
	b := make([]byte, 44)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	return b
}

func TestSpeech(t *testing.T) {
	const rate, seconds = 24000, 2
	pcm := make([]byte, rate*2*seconds)
	progressive := func(head []byte, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Write(head)
			for i := 0; i < 4; i++ {
				w.Write(pcm[i*len(pcm)/4 : (i+1)*len(pcm)/4])
				w.(http.Flusher).Flush()
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		format  string
		answer  http.HandlerFunc
		class   string
		seconds float64
		bytes   int
	}{
		{"wav", "wav", progressive(wavHead(rate, len(pcm)), "audio/wav"), "", seconds, 44 + len(pcm)},
		{"streaming wav", "wav", progressive(wavHead(rate, 0xFFFFFFFF-36), "audio/wav"), "", seconds, 44 + len(pcm)},
		{"pcm", "pcm", progressive(nil, "audio/pcm"), "", seconds, len(pcm)},
		{"json error", "wav", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"error":{"message":"voice not found"}}`)
		}, engine.ErrAPI, 0, 0},
		{"no audio", "wav", func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Content-Type", "audio/wav") }, engine.ErrStreamTruncated, 0, 0},
		{"refused", "mp3", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"unsupported response_format"}}`, 400)
		}, "http_4xx:400", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan captured, 1)
			srv := serve(t, capture(t, got, tc.answer))
			c := testClient(t, srv.URL, func(c *Config) { c.Tokenizer = TokenizerNone })
			res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointSpeech, Model: "tts",
				Prompt: "Hello there.", Voice: "alloy", AudioFormat: tc.format})
			cap := <-got
			var body map[string]any
			_ = json.Unmarshal(cap.body, &body)
			if body["input"] != "Hello there." || body["voice"] != "alloy" || body["response_format"] != tc.format {
				t.Errorf("body %s", cap.body)
			}
			if tc.class != "" {
				if res.Err == nil || res.Err.Class != tc.class {
					t.Fatalf("error %v, want class %s", res.Err, tc.class)
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.AudioBytes != int64(tc.bytes) || res.AudioOut != tc.seconds {
				t.Errorf("AudioBytes %d AudioOut %g, want %d and %g", res.AudioBytes, res.AudioOut, tc.bytes, tc.seconds)
			}
			if res.TTFT <= 0 || res.E2E <= res.TTFT || len(res.ITL) == 0 {
				t.Errorf("TTFT %v E2E %v ITL %d", res.TTFT, res.E2E, len(res.ITL))
			}
		})
	}
}

func BenchmarkMediaBody(b *testing.B) {
	// The body of a request with one 1024² JPEG against one of text of
	// as many tokens (about 1,000): with the image's text encoded once
	// per process and spliced in, both cost about the same.
	img, err := media.SyntheticImage(media.ImageSpec{Width: 1024, Height: 1024}, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	img.Base64()
	c := testClient(b, "http://127.0.0.1:9/v1")
	for _, tc := range []struct {
		name string
		req  *engine.ChatRequest
	}{
		{"image", &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user",
			Parts: []engine.Part{{Type: engine.PartText, Text: "describe"}, {Type: engine.PartImage, Media: img}}}}}},
		{"text", &engine.ChatRequest{Model: "m", Messages: []engine.Message{{Role: "user", Content: strings.Repeat("word ", 1000)}}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := c.payload(chatDialect{}, tc.req)
				if err != nil || p.n == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestPreflightSpeechAPIs(t *testing.T) {
	got := make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil || r.MultipartForm.File["file"] == nil {
			http.Error(w, `{"error":{"message":"no file"}}`, 400)
			return
		}
		got <- "transcriptions " + r.FormValue("model")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"text":"ping"}`)
	})
	mux.HandleFunc("/v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		got <- fmt.Sprint("speech ", b["model"], " ", b["input"])
		w.Header().Set("Content-Type", "audio/wav")
		w.Write(append(wavHead(24000, 4800), make([]byte, 4800)...))
	})
	srv := serve(t, mux)
	info, err := testClient(t, srv.URL+"/v1").Preflight(context.Background(), "whisper",
		engine.EndpointTranscriptions, engine.EndpointSpeech)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := <-got, <-got; a != "transcriptions whisper" || b != "speech whisper ping" {
		t.Errorf("preflight sent %q and %q", a, b)
	}
	if len(info.APIs) != 2 {
		t.Errorf("APIs %v", info.APIs)
	}
}
