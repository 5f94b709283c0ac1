package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/engine/mmproj"
)

// The media tests against a real llama-server: the build and model of
// .ci/llama-server.sh, given a projector engine/mmproj writes with random
// weights (so the text is gibberish, and the framing, usage, timings and
// refusals are the server's own). Each test starts its own instance on
// loopback and kills it when it ends; they skip, saying how to get the
// server, where it is absent outside CI.

// Vision projector of the tests: every image is resized to 112 px, 8×8
// patches of 14 px, so an image costs 64 tokens whatever its size, and
// two fit in a 512-token slot beside the text.
var testVision = mmproj.VisionOptions{ImageSize: 112, PatchSize: 14, TextEmbd: 64, Seed: 1}

// imageRun is what llama-server adds to the prompt between a text part
// and the images after it (measured: the first image after text costs
// one token more than the patches, each next one the patches alone).
const imageRun = 1

// audioChunkTokens is what llama-server counts for each started 30 s of
// audio with a qwen2a projector (the Whisper encoder's 1500 frames,
// pooled by 2).
const audioChunkTokens = 750

// startMedia starts llama-server with the projector write makes.
func startMedia(t *testing.T, name string, write func(path string) error, args ...string) string {
	t.Helper()
	mmproj.LlamaPathsOrSkip(t)
	path := filepath.Join(t.TempDir(), name+".gguf")
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	l := mmproj.StartLlama(t, path, append(args, "-np", "1", "--no-warmup", "-t", "2")...)
	return l.Base + "/v1"
}

// mediaClient is a client of the real server: its timeouts a real
// request's, the default tokenizer (cl100k_base) counting the text.
func mediaClient(t *testing.T, base string) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: base, ConnectTimeout: 5 * time.Second, TTFTTimeout: 20 * time.Second,
		IdleTimeout: 20 * time.Second, TotalTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

const mediaQuestion = "What is in this image?"

// mediaReq asks about the parts with the prompt cache off, so that every
// request's prompt is processed and counted again.
func mediaReq(endpoint string, stream bool, parts ...engine.Part) *engine.ChatRequest {
	return &engine.ChatRequest{Endpoint: endpoint, Model: "stories260K", MaxTokens: 4, NoStream: !stream,
		Extra:    map[string]any{"cache_prompt": false},
		Messages: []engine.Message{{Role: "user", Parts: parts}}}
}

func textPart(s string) engine.Part { return engine.Part{Type: engine.PartText, Text: s} }

func imagePart(t *testing.T, spec media.ImageSpec, variant int) engine.Part {
	t.Helper()
	it, err := media.SyntheticImage(spec, 26, variant)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Part{Type: engine.PartImage, Media: it}
}

func mustSucceed(t *testing.T, r *engine.Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("status %d, error %s: %s", r.Status, r.Err.Class, r.Err.Message)
	}
}

// Images in chat completions and the Messages API, against the server's
// own count: each image costs the projector's patches ((112/14)² = 64),
// whatever its size and format, and the first after the text one token
// more. MediaTokens is usage's prompt count less the client's count of
// the text, so it holds the image tokens plus every prompt token the
// client does not count: the chat template's, and the difference between
// cl100k_base and the model's own tokenizer on the text — it is checked
// to be exactly that.
func TestLlamaCppImages(t *testing.T) {
	base := startMedia(t, "vision", func(p string) error { return mmproj.WriteVisionFile(p, testVision) }, "-c", "512")
	c := mediaClient(t, base)
	ctx := context.Background()
	perImage := testVision.Patches()

	// The server's count of the text alone, and the client's.
	textOnly := c.Chat(ctx, mediaReq(engine.EndpointChat, true, textPart(mediaQuestion)))
	mustSucceed(t, textOnly)
	clientText, ok := c.promptTokens(mediaReq(engine.EndpointChat, true, textPart(mediaQuestion)))
	if !ok || textOnly.InputTokensSource != engine.TokensFromUsage || textOnly.MediaTokens != 0 {
		t.Fatalf("text only: %d input tokens (%s), media tokens %d; client's count %d, %v",
			textOnly.InputTokens, textOnly.InputTokensSource, textOnly.MediaTokens, clientText, ok)
	}
	uncounted := textOnly.InputTokens - clientText // the template, and the tokenizers' difference
	modelText := serverTokens(t, strings.TrimSuffix(base, "/v1"), mediaQuestion)
	if template := textOnly.InputTokens - modelText; template <= 0 || modelText < clientText {
		t.Errorf("the server counts %d tokens for the text alone, %d with the chat template; the client %d",
			modelText, textOnly.InputTokens, clientText)
	}
	t.Logf("text only: server %d prompt tokens (the text %d, the chat template %d), client %d (cl100k_base): %d not counted by the client",
		textOnly.InputTokens, modelText, textOnly.InputTokens-modelText, clientText, uncounted)

	small := media.ImageSpec{Width: 64, Height: 48, Format: "png"}
	large := media.ImageSpec{Width: 640, Height: 480, Format: "jpeg"}
	tests := []struct {
		name     string
		endpoint string
		stream   bool
		images   []engine.Part
	}{
		{"chat, one png, streamed", engine.EndpointChat, true, []engine.Part{imagePart(t, small, 0)}},
		{"chat, one jpeg 640x480, streamed", engine.EndpointChat, true, []engine.Part{imagePart(t, large, 0)}},
		{"chat, two images, streamed", engine.EndpointChat, true, []engine.Part{imagePart(t, small, 1), imagePart(t, large, 1)}},
		{"chat, two images, not streamed", engine.EndpointChat, false, []engine.Part{imagePart(t, small, 2), imagePart(t, small, 3)}},
		{"messages, one image, streamed", engine.EndpointMessages, true, []engine.Part{imagePart(t, large, 2)}},
		{"messages, one image, not streamed", engine.EndpointMessages, false, []engine.Part{imagePart(t, small, 4)}},
		{"messages, two images, streamed", engine.EndpointMessages, true, []engine.Part{imagePart(t, small, 5), imagePart(t, large, 3)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := mediaReq(tc.endpoint, tc.stream, append([]engine.Part{textPart(mediaQuestion)}, tc.images...)...)
			r := c.Chat(ctx, req)
			mustSucceed(t, r)
			n := len(tc.images)
			imageTokens := n*perImage + imageRun
			if r.Images != n || r.Status != http.StatusOK || r.Streamed != tc.stream {
				t.Errorf("%d images, status %d, streamed %v; want %d, 200, %v", r.Images, r.Status, r.Streamed, n, tc.stream)
			}
			if r.InputTokensSource != engine.TokensFromUsage || r.InputTokens != textOnly.InputTokens+imageTokens {
				t.Errorf("input tokens %d (%s), want the text's %d + %d×%d + %d from usage",
					r.InputTokens, r.InputTokensSource, textOnly.InputTokens, n, perImage, imageRun)
			}
			// Chat honours cache_prompt false; the Messages API does not (it
			// reads the text before the image from the cache of the last
			// request, and says so in cache_read_input_tokens).
			if tc.endpoint == engine.EndpointChat && r.CachedTokens != 0 {
				t.Errorf("%d cached tokens with cache_prompt false", r.CachedTokens)
			}
			if tc.endpoint == engine.EndpointMessages {
				t.Logf("messages: %d input tokens, %d of them cached though cache_prompt is false", r.InputTokens, r.CachedTokens)
			}
			if r.MediaTokens != imageTokens+uncounted {
				t.Errorf("media tokens %d, want the images' %d + the %d the client does not count", r.MediaTokens, imageTokens, uncounted)
			}
			if r.BodyBytes < int64(totalBase64(tc.images)) {
				t.Errorf("body of %d bytes, less than its images' base64", r.BodyBytes)
			}
			if tc.stream && r.TTFT <= 0 || !tc.stream && r.TTFT != 0 {
				t.Errorf("TTFT %v (streamed %v)", r.TTFT, tc.stream)
			}
			// llama-server sends timings with chat, not with Messages.
			if tc.endpoint == engine.EndpointChat {
				if r.Server == nil {
					t.Fatal("no server timings")
				}
				if r.Server.PromptN != r.InputTokens {
					t.Errorf("server processed %d prompt tokens, usage says %d", r.Server.PromptN, r.InputTokens)
				}
				prompt := time.Duration(r.Server.PromptMS * float64(time.Millisecond))
				first := r.TTFT
				if !tc.stream {
					first = r.E2E
				}
				if first < prompt {
					t.Errorf("TTFT %v (E2E when not streamed) shorter than the server's prompt_ms %v", first, prompt)
				}
				t.Logf("%d tokens, %d of %d images: TTFT %v, E2E %v, server prompt_ms %.1f; media tokens %d, body %d bytes",
					r.InputTokens, imageTokens, n, r.TTFT.Round(time.Microsecond), r.E2E.Round(time.Microsecond), r.Server.PromptMS, r.MediaTokens, r.BodyBytes)
			}
		})
	}

	// After a preflight, whose text-only request measures what the
	// template and the tokenizers' difference cost, MediaTokens leaves that
	// out: what remains is the images' tokens and the tokenizers'
	// difference on this text beyond the preflight's "ping".
	t.Run("calibrated by the preflight", func(t *testing.T) {
		cc := mediaClient(t, base)
		if _, err := cc.Preflight(ctx, "stories260K"); err != nil {
			t.Fatal(err)
		}
		o, ok := cc.overhead.Load(engine.EndpointChat)
		if !ok || o.(int) <= 0 {
			t.Fatalf("preflight overhead %v, %v", o, ok)
		}
		r := cc.Chat(ctx, mediaReq(engine.EndpointChat, true, textPart(mediaQuestion), imagePart(t, small, 7)))
		mustSucceed(t, r)
		want := perImage + imageRun + uncounted - o.(int)
		if r.MediaTokens != want || r.MediaTokens >= perImage+imageRun+uncounted {
			t.Errorf("media tokens %d, want %d: the image's %d and %d of the text the client does not count beyond the preflight's",
				r.MediaTokens, want, perImage+imageRun, uncounted-o.(int))
		}
		t.Logf("after the preflight (overhead %d tokens): media tokens %d for an image of %d", o, r.MediaTokens, perImage+imageRun)
	})

	// What the server refuses, and how: an undecodable image is the
	// client's fault (400, its message), streamed or not, in either API.
	photo := imagePart(t, small, 9)
	refused := []struct {
		name string
		item *media.Item
	}{
		{"truncated", media.Truncated(photo.Media)},
		{"zero pixels", media.ZeroPixel()},
		{"bad base64", media.BadBase64(photo.Media)},
	}
	for _, tc := range refused {
		for _, endpoint := range []string{engine.EndpointChat, engine.EndpointMessages} {
			for _, stream := range []bool{true, false} {
				t.Run("refused "+tc.name+" "+endpoint+" "+map[bool]string{true: "streamed", false: "not streamed"}[stream], func(t *testing.T) {
					r := c.Chat(ctx, mediaReq(endpoint, stream, textPart(mediaQuestion), engine.Part{Type: engine.PartImage, Media: tc.item}))
					if r.Err == nil {
						t.Fatalf("accepted (%d input tokens), want a 400", r.InputTokens)
					}
					if r.Status != http.StatusBadRequest || r.Err.Class != engine.HTTPErrorClass(http.StatusBadRequest) ||
						r.Err.Message != "Failed to load image or audio file" {
						t.Errorf("status %d, %s: %q; want 400, %s: the server's message", r.Status, r.Err.Class, r.Err.Message,
							engine.HTTPErrorClass(http.StatusBadRequest))
					}
					if r.Images != 1 || r.MediaTokens != 0 || r.TTFT != 0 {
						t.Errorf("images %d, media tokens %d, TTFT %v; want 1, 0, 0", r.Images, r.MediaTokens, r.TTFT)
					}
				})
			}
		}
	}

	// Audio to a server without an audio encoder is its 500.
	t.Run("audio to the vision server", func(t *testing.T) {
		r := c.Chat(ctx, mediaReq(engine.EndpointChat, true, textPart("What is this?"), audioPart(t, 1, 0)))
		if r.Err == nil || r.Status != http.StatusInternalServerError || !strings.HasPrefix(r.Err.Message, "audio input is not supported") {
			t.Errorf("status %d, error %+v; want 500 audio input is not supported", r.Status, r.Err)
		}
	})
}

func totalBase64(parts []engine.Part) int {
	n := 0
	for _, p := range parts {
		n += len(p.Media.Base64())
	}
	return n
}

func audioPart(t *testing.T, seconds float64, variant int) engine.Part {
	t.Helper()
	it, err := media.SyntheticAudio(media.AudioSpec{Seconds: seconds}, 26, variant)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Part{Type: engine.PartAudio, Media: it}
}

// rawTranscription posts audio to the server as curl would and returns
// its usage's input tokens, the count the client's must equal, and those
// it says came from its prompt cache.
func rawTranscription(t *testing.T, base string, audio *media.Item) (input, cached int) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "audio.wav")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(audio.Data())
	mw.WriteField("model", "stories260K")
	mw.WriteField("max_tokens", "4")
	mw.Close()
	resp, err := http.Post(base+"/audio/transcriptions", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Text  string `json:"text"`
		Usage struct {
			Input   int `json:"input_tokens"`
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("raw transcription: status %d, %v", resp.StatusCode, err)
	}
	return got.Usage.Input, got.Usage.Details.Cached
}

// Audio against a qwen2a projector: transcriptions streamed (OpenAI's
// transcript.text.delta events, then transcript.text.done with usage)
// and not, and input_audio in chat. The server counts 750 tokens per
// started 30 s of audio, whatever its length within them; the client
// takes the count from usage, and a transcription's media tokens are all
// of its input tokens.
func TestLlamaCppAudio(t *testing.T) {
	base := startMedia(t, "audio", func(p string) error { return mmproj.WriteAudioFile(p, mmproj.AudioOptions{TextEmbd: 64, Seed: 2}) },
		"-c", "2048")
	c := mediaClient(t, base)
	ctx := context.Background()
	short, long := audioPart(t, 1, 0), audioPart(t, 31, 0)

	// Each audio is new to the server (its prompt cache cannot be turned
	// off for a transcription, see below), so the first request of each
	// runs the encoder; the same audio sent again as curl would gives the
	// server's count, which the client's must equal.
	server := map[float64]int{}
	for _, tc := range []struct {
		name   string
		audio  engine.Part
		stream bool
	}{
		{"1 s streamed", short, true},
		{"1 s not streamed", audioPart(t, 1, 1), false},
		{"31 s streamed", long, true},
	} {
		t.Run("transcription "+tc.name, func(t *testing.T) {
			req := &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "stories260K", NoStream: !tc.stream,
				Audio: tc.audio.Media, Extra: map[string]any{"max_tokens": 4}}
			r := c.Chat(ctx, req)
			mustSucceed(t, r)
			want, _ := rawTranscription(t, base, tc.audio.Media)
			server[tc.audio.Media.Seconds] = want
			if r.InputTokens != want || r.InputTokensSource != engine.TokensFromUsage || r.MediaTokens != want {
				t.Errorf("input tokens %d (%s), media tokens %d; want the server's %d from usage, all media",
					r.InputTokens, r.InputTokensSource, r.MediaTokens, want)
			}
			if r.Audios != 1 || r.AudioIn != tc.audio.Media.Seconds || r.Text == "" || r.FinishReason != "stop" {
				t.Errorf("audios %d, %g s, text %q, finish %q", r.Audios, r.AudioIn, r.Text, r.FinishReason)
			}
			if r.Streamed != tc.stream || tc.stream && (r.TTFT <= 0 || r.TextEvents < 2 || r.E2E < r.TTFT) || !tc.stream && r.TTFT != 0 {
				t.Errorf("streamed %v, TTFT %v, E2E %v, %d text events", r.Streamed, r.TTFT, r.E2E, r.TextEvents)
			}
			if r.OutputTokens != 4 || r.TokensSource != engine.TokensFromUsage {
				t.Errorf("output tokens %d (%s), want max_tokens 4 from usage", r.OutputTokens, r.TokensSource)
			}
			t.Logf("%g s: %d input tokens, TTFT %v, E2E %v, %d text events, body %d bytes",
				r.AudioIn, r.InputTokens, r.TTFT.Round(time.Microsecond), r.E2E.Round(time.Microsecond), r.TextEvents, r.BodyBytes)
		})
	}
	rawShort, rawLong := server[1], server[31]
	if rawLong-rawShort != audioChunkTokens || rawShort <= audioChunkTokens {
		t.Errorf("the server counts %d tokens for 1 s and %d for 31 s: want %d more for the second 30 s", rawShort, rawLong, audioChunkTokens)
	}
	t.Logf("server: 1 s of audio %d input tokens, 31 s %d", rawShort, rawLong)

	// A form's fields are strings: the server refuses cache_prompt as one.
	t.Run("transcription with cache_prompt false", func(t *testing.T) {
		r := c.Chat(ctx, &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "stories260K", Audio: short.Media,
			Extra: map[string]any{"cache_prompt": false}})
		if r.Status != http.StatusBadRequest || r.Err == nil || !strings.HasPrefix(r.Err.Message, "Field 'cache_prompt': ") {
			t.Errorf("status %d, error %+v; want 400 Field 'cache_prompt': ... type must be boolean, but is string", r.Status, r.Err)
		}
	})

	// The same audio twice: the server says it read all but one of the
	// second's prompt from its cache (input_tokens_details.cached_tokens),
	// and the client must keep that as a chat request's cached tokens.
	// (It fails today: transcriptUsage reads no input_tokens_details, so
	// a transcription's CachedTokens is always 0.)
	t.Run("transcription cached tokens", func(t *testing.T) {
		rawTranscription(t, base, short.Media)
		input, cached := rawTranscription(t, base, short.Media)
		if cached != input-1 {
			t.Fatalf("the server read %d of %d tokens from its cache, want all but one", cached, input)
		}
		r := c.Chat(ctx, &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "stories260K", NoStream: true,
			Audio: short.Media, Extra: map[string]any{"max_tokens": 4}})
		mustSucceed(t, r)
		if r.InputTokens != input || r.CachedTokens != cached {
			t.Errorf("input tokens %d, cached %d; want the server's %d, %d cached", r.InputTokens, r.CachedTokens, input, cached)
		}
	})

	// In chat, the audio costs its chunks' tokens and a fixed framing
	// (measured: 29 tokens), the same whatever its length.
	t.Run("input_audio in chat", func(t *testing.T) {
		const q = "What is this?"
		textOnly := c.Chat(ctx, mediaReq(engine.EndpointChat, true, textPart(q)))
		mustSucceed(t, textOnly)
		framing := -1
		for _, a := range []engine.Part{short, long} {
			r := c.Chat(ctx, mediaReq(engine.EndpointChat, true, textPart(q), a))
			mustSucceed(t, r)
			chunks := int(math.Ceil(a.Media.Seconds / 30))
			audioTokens := r.InputTokens - textOnly.InputTokens
			if f := audioTokens - chunks*audioChunkTokens; framing < 0 {
				framing = f
			} else if f != framing {
				t.Errorf("%g s: %d tokens beyond the text's, %d×%d + %d; want the same framing %d as 1 s", a.Media.Seconds,
					audioTokens, chunks, audioChunkTokens, f, framing)
			}
			if framing < 0 || framing > 64 {
				t.Errorf("%g s: the audio costs %d tokens beyond its %d chunks: want a few", a.Media.Seconds, framing, chunks)
			}
			if r.Audios != 1 || r.AudioIn != a.Media.Seconds || r.TTFT <= 0 || r.Server == nil || r.CachedTokens != 0 {
				t.Fatalf("audios %d, %g s, TTFT %v, timings %v, %d cached", r.Audios, r.AudioIn, r.TTFT, r.Server, r.CachedTokens)
			}
			if r.MediaTokens != r.InputTokens-mustCount(t, c, q) {
				t.Errorf("media tokens %d, want usage's %d less the client's count of the text", r.MediaTokens, r.InputTokens)
			}
			if prompt := time.Duration(r.Server.PromptMS * float64(time.Millisecond)); r.TTFT < prompt {
				t.Errorf("TTFT %v shorter than the server's prompt_ms %v", r.TTFT, prompt)
			}
			t.Logf("chat, %g s of audio: %d input tokens (%d the audio's), media tokens %d, TTFT %v, prompt_ms %.1f",
				a.Media.Seconds, r.InputTokens, audioTokens, r.MediaTokens, r.TTFT.Round(time.Microsecond), r.Server.PromptMS)
		}
	})

	// What the server makes of files that are not good audio.
	lying, err := media.LyingHeader(26)
	if err != nil {
		t.Fatal(err)
	}
	img := imagePart(t, media.ImageSpec{Width: 32, Height: 32, Format: "png"}, 0)
	for _, tc := range []struct {
		name    string
		item    *media.Item
		status  int
		message string
	}{
		// An audio-only server takes an image for text it cannot tokenize.
		{"an image", img.Media, http.StatusBadRequest, "Failed to tokenize prompt"},
		// A header that claims 10× the samples, and a file cut in half,
		// are decoded as far as they go and transcribed: 1 s, one chunk.
		{"a wav whose header lies", lying, http.StatusOK, ""},
		{"a truncated wav", media.Truncated(short.Media), http.StatusOK, ""},
		{"not audio at all", media.Raw("text", media.Info{Kind: media.Audio, Format: "wav", MIME: "audio/wav"}, []byte("hello, this is not audio")),
			http.StatusBadRequest, "Failed to load image or audio file"},
	} {
		t.Run("transcription of "+tc.name, func(t *testing.T) {
			r := c.Chat(ctx, &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "stories260K", Audio: tc.item,
				Extra: map[string]any{"max_tokens": 4}})
			if r.Status != tc.status {
				t.Fatalf("status %d (error %+v), want %d", r.Status, r.Err, tc.status)
			}
			if tc.status != http.StatusOK {
				if r.Err == nil || r.Err.Class != engine.HTTPErrorClass(tc.status) || r.Err.Message != tc.message {
					t.Errorf("error %+v, want %s: %q", r.Err, engine.HTTPErrorClass(tc.status), tc.message)
				}
				return
			}
			if r.Err != nil || r.InputTokens != rawShort || r.Text == "" {
				t.Errorf("error %+v, %d input tokens, text %q; want accepted as 1 s: %d tokens", r.Err, r.InputTokens, r.Text, rawShort)
			}
		})
	}
}

// mustCount is the client's offline count of s.
func mustCount(t *testing.T, c *Client, s string) int {
	t.Helper()
	n, ok := c.tok.count(s)
	if !ok {
		t.Fatalf("the client cannot count %q", s)
	}
	return n
}

// serverTokens is the model's own count of s, from llama-server's
// /tokenize.
func serverTokens(t *testing.T, server, s string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"content": s})
	resp, err := http.Post(server+"/tokenize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/tokenize: status %d, %v", resp.StatusCode, err)
	}
	return len(got.Tokens)
}
