package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// The media wire forms against the bytes of real servers' documented
// examples (testdata/media, their sources in SOURCES.md): the requests
// llmload builds hold the documented messages, and the documented answers
// read as what they say.

func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "media", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sentBody returns the JSON body the client sends for req, decoded.
func sentBody(t *testing.T, req *engine.ChatRequest) map[string]any {
	t.Helper()
	c := testClient(t, "http://127.0.0.1:9/v1", func(c *Config) { c.Tokenizer = TokenizerNone })
	p, err := c.payload(dialectOf(req), req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(p.joined(), &m); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	return m
}

func decodeRecorded(t *testing.T, name string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(recorded(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// itemOf returns the media item of a recorded base64 payload.
func itemOf(t *testing.T, b64 string) *media.Item {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	it, err := media.New("recorded", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func TestRecordedMediaRequests(t *testing.T) {
	audioDoc := decodeRecorded(t, "vllm_chat_audio_request.json")
	audioB64 := dig(audioDoc, "messages", 0, "content", 1, "input_audio", "data").(string)
	imageDoc := decodeRecorded(t, "anthropic_image_request.json")
	imageB64 := dig(imageDoc, "messages", 0, "content", 0, "source", "data").(string)
	for _, tc := range []struct {
		file string
		req  *engine.ChatRequest
		keys []string // the top-level members compared
	}{
		{"openai_chat_image_request.json", &engine.ChatRequest{Model: "gpt-4o-mini", MaxTokens: 300,
			Messages: []engine.Message{{Role: "user", Parts: []engine.Part{
				{Type: engine.PartText, Text: "What’s in this image?"},
				{Type: engine.PartImage, URL: "https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"},
			}}}}, []string{"model", "messages", "max_tokens"}},
		{"vllm_chat_audio_request.json", &engine.ChatRequest{Model: "fixie-ai/ultravox-v0_5-llama-3_2-1b",
			Messages: []engine.Message{{Role: "user", Parts: []engine.Part{
				{Type: engine.PartText, Text: "What's in this audio?"},
				{Type: engine.PartAudio, Media: itemOf(t, audioB64)},
			}}}}, []string{"model", "messages"}},
		{"anthropic_image_request.json", &engine.ChatRequest{Endpoint: engine.EndpointMessages, Model: "claude-sonnet-4-5-20250929",
			MaxTokens: 1024, Messages: []engine.Message{{Role: "user", Parts: []engine.Part{
				{Type: engine.PartImage, Media: itemOf(t, imageB64)},
				{Type: engine.PartText, Text: dig(imageDoc, "messages", 0, "content", 1, "text").(string)},
			}}}}, []string{"model", "max_tokens", "messages"}},
		{"openai_responses_image_request.json", &engine.ChatRequest{Endpoint: engine.EndpointResponses, Model: "o4-mini-deep-research",
			Messages: []engine.Message{{Role: "user", Parts: []engine.Part{
				{Type: engine.PartText, Text: "What is in this image?"},
				{Type: engine.PartImage, Media: itemOf(t, imageB64)},
			}}}}, []string{"model", "input"}},
		{"vllm_chat_video_request.json", &engine.ChatRequest{Model: "Qwen/Qwen3.8-27B",
			Messages: []engine.Message{{Role: "user", Parts: []engine.Part{
				{Type: engine.PartVideo, URL: "https://qianwen-res.oss-accelerate.aliyuncs.com/Qwen3.5/demo/video/N1cdUjctpG8.mp4"},
				{Type: engine.PartText, Text: "How many porcelain jars were discovered in the niches located in the primary chamber of the tomb?"},
			}}}}, []string{"model", "messages"}},
		{"openai_speech_request.json", &engine.ChatRequest{Endpoint: engine.EndpointSpeech, Model: "gpt-4o-mini-tts",
			Prompt: "The quick brown fox jumped over the lazy dog.", Voice: "alloy"}, []string{"model", "input", "voice"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want := decodeRecorded(t, tc.file)
			got := sentBody(t, tc.req)
			for _, k := range tc.keys {
				if !reflect.DeepEqual(got[k], want[k]) {
					g, _ := json.Marshal(got[k])
					w, _ := json.Marshal(want[k])
					t.Errorf("%s:\n got %.400s\nwant %.400s", k, g, w)
				}
			}
			if tc.req.Endpoint == engine.EndpointSpeech && len(got) != len(want) {
				t.Errorf("speech body %v, want exactly the documented members %v", got, want)
			}
		})
	}
}

func TestRecordedTranscriptionAnswers(t *testing.T) {
	wav := testAudio(t, 1)
	for _, tc := range []struct {
		file, ctype     string
		noStream        bool
		text            string
		events, in, out int
	}{
		{"openai_transcription_stream.sse", "text/event-stream", false,
			"I see skies of blue and clouds of white, the bright blessed days, the dark sacred nights, and I think to myself, what a wonderful world.",
			31, 14, 45},
		{"vllm_transcription_stream.sse", "text/event-stream", false, "हां जी", 3, 0, 0},
		{"openai_transcription.json", "application/json", true,
			"Imagine the wildest idea that you've ever had, and you're curious about how it might scale to something that's a 100, a 1,000 times bigger. This is a place where you can get to do that.",
			1, 14, 45},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := recorded(t, tc.file)
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Write(body)
			}))
			c := testClient(t, srv.URL, func(c *Config) { c.Tokenizer = TokenizerNone })
			res := c.Chat(context.Background(), &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: "m",
				Audio: wav, NoStream: tc.noStream})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Text != tc.text || res.TextEvents != tc.events {
				t.Errorf("text %q in %d events, want %q in %d", res.Text, res.TextEvents, tc.text, tc.events)
			}
			if tc.in > 0 && (res.InputTokens != tc.in || res.OutputTokens != tc.out || res.TokensSource != engine.TokensFromUsage) {
				t.Errorf("tokens in %d out %d (%s), want %d and %d from usage", res.InputTokens, res.OutputTokens, res.TokensSource, tc.in, tc.out)
			}
		})
	}
}
