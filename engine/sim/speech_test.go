package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/llmload/llmload/engine/media"
)

// transcriptionBody is the multipart form the client sends; a nil file
// leaves the file field out.
func transcriptionBody(t *testing.T, file []byte, fields map[string]string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if file != nil {
		fw, err := mw.CreateFormFile("file", "audio.wav")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

func transcribe(s *Server, body, contentType string) *httptest.ResponseRecorder {
	return serve(s, http.MethodPost, "/v1/audio/transcriptions", body, map[string]string{"Content-Type": contentType})
}

// A transcription's prompt is its audio, 25 tokens a second; its text
// about 2.5 words a second, whole or streamed as OpenAI streams it.
func TestTranscription(t *testing.T) {
	var log bytes.Buffer
	s := New(zeroCost(Config{TruthLog: &log}))
	wav := synthAudio(t, 4)
	tests := []struct {
		name   string
		fields map[string]string
	}{
		{"json", map[string]string{"model": DefaultModel, "response_format": "json"}},
		{"default format", map[string]string{"language": "en"}},
		{"streamed", map[string]string{"model": DefaultModel, "stream": "true", "response_format": "json"}},
		{"text", map[string]string{"response_format": "text", "stream": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ct := transcriptionBody(t, wav.Data(), tt.fields)
			w := transcribe(s, b, ct)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			var text string
			var usage transcriptionUsage
			switch {
			case tt.fields["stream"] == "true":
				text, usage = readTranscriptStream(t, w.Body.String())
			case tt.fields["response_format"] == "text":
				text, usage = strings.TrimSuffix(w.Body.String(), "\n"), transcriptionUsage{InputTokens: 100, OutputTokens: 10}
				usage.InputTokenDetails.AudioTokens = 100
			default:
				var resp struct {
					Text  string             `json:"text"`
					Usage transcriptionUsage `json:"usage"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Fatal(err)
				}
				text, usage = resp.Text, resp.Usage
			}
			if got := usage.InputTokenDetails.AudioTokens; got != 100 || usage.InputTokens != 100 {
				t.Errorf("usage %+v: want 100 input tokens, all audio (4 s × 25)", usage)
			}
			if usage.OutputTokens != 10 || (usage.TotalTokens != 0 && usage.TotalTokens != 110) {
				t.Errorf("usage %+v: want 10 output tokens (4 s × 2.5), 110 in all", usage)
			}
			if words := len(strings.Fields(strings.ReplaceAll(text, ".", ""))); words < 6 || words > 10 {
				t.Errorf("transcript %q has %d words, want about 10", text, words)
			}
		})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(log.String()) {
		var r TruthRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Endpoint != "transcriptions" || r.Audios != 1 || r.AudioSeconds != 4 || r.MediaTokens != 100 ||
			r.PromptTokens != 100 || r.Tokens != 10 || !r.Complete || r.BodyBytes < int64(wav.Size()) {
			t.Errorf("truth record %+v", r)
		}
	}
}

// readTranscriptStream checks the events: deltas, then one done whose
// text is theirs, with the usage.
func readTranscriptStream(t *testing.T, stream string) (string, transcriptionUsage) {
	t.Helper()
	var deltas strings.Builder
	var done *transcriptEvent
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev transcriptEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		switch {
		case done != nil:
			t.Errorf("event %q after transcript.text.done", data)
		case ev.Type == "transcript.text.delta":
			deltas.WriteString(ev.Delta)
		case ev.Type == "transcript.text.done":
			done = &ev
		default:
			t.Errorf("unexpected event %q", data)
		}
	}
	if done == nil || done.Usage == nil {
		t.Fatalf("no transcript.text.done with usage in %q", stream)
	}
	if done.Text != deltas.String() {
		t.Errorf("done text %q, deltas %q", done.Text, deltas.String())
	}
	return done.Text, *done.Usage
}

// The audio's tokens are prefilled: on a fake clock, the first delta
// leaves PrefillBase + 100 × PrefillPerToken after arrival.
func TestTranscriptionPrefill(t *testing.T) {
	wav := synthAudio(t, 4)
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		s := New(Config{PrefillBase: time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodeBase: -1, TruthLog: &log})
		b, ct := transcriptionBody(t, wav.Data(), map[string]string{"stream": "true"})
		transcribe(s, b, ct)
		s.Close()
		var r TruthRecord
		if err := json.Unmarshal(log.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if got, want := r.TTFTMS, 11.0; got != want {
			t.Errorf("TTFT %v ms, want %v (1 ms + 100 audio tokens × 0.1 ms)", got, want)
		}
	})
}

func TestTranscriptionRefusals(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	wav := synthAudio(t, 1)
	lying, err := media.LyingHeader(1)
	if err != nil {
		t.Fatal(err)
	}
	png := synthImage(t, 16, 16, "png")
	tests := []struct {
		name   string
		file   []byte
		fields map[string]string
		status int
		want   string
	}{
		{"no file", nil, map[string]string{"model": DefaultModel}, 400, "file: field required"},
		{"an image", png.Data(), nil, 400, "the data is png, not an audio"},
		{"not audio at all", []byte("hello, this is text"), nil, 400, "the data is not an audio file"},
		{"lying header", lying.Data(), nil, 400, "cannot decode the audio: unreadable wav header"},
		{"truncated", media.Truncated(wav).Data(), nil, 400, "cannot decode the audio"},
		{"verbose_json", wav.Data(), map[string]string{"response_format": "verbose_json"}, 400, "expected json or text"},
		{"bad stream", wav.Data(), map[string]string{"stream": "yes please"}, 400, "stream must be true or false"},
		{"unknown model", wav.Data(), map[string]string{"model": "whisper-9"}, 404, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ct := transcriptionBody(t, tt.file, tt.fields)
			w := transcribe(s, b, ct)
			if msg := errorMessage(w.Body.Bytes()); w.Code != tt.status || !strings.Contains(msg, tt.want) {
				t.Errorf("got %d %s, want %d containing %q", w.Code, w.Body, tt.status, tt.want)
			}
		})
	}
	w := transcribe(s, `{"file":"x"}`, "application/json")
	if w.Code != http.StatusUnsupportedMediaType || !strings.Contains(errorMessage(w.Body.Bytes()), "multipart/form-data") {
		t.Errorf("a JSON body: %d %s, want 415 naming multipart/form-data", w.Code, w.Body)
	}
}

// Speech is a WAV header of the exact sizes, then 24 kHz 16-bit mono
// samples, all sent SpeechRTF times faster than they play, after the
// prefill of the input's tokens: exact on a fake clock.
func TestSpeech(t *testing.T) {
	ten := "one two three four five six seven eight nine ten" // 4 s
	tests := []struct {
		name       string
		req        map[string]any
		rtf        float64
		wav        bool
		seconds    float64
		contentTyp string
	}{
		{"wav default", map[string]any{"model": DefaultModel, "input": ten, "voice": "alloy"}, 0, true, 4, "audio/wav"},
		{"wav, rtf 8", map[string]any{"input": ten, "response_format": "wav"}, 8, true, 4, "audio/wav"},
		{"pcm", map[string]any{"input": ten, "response_format": "pcm"}, 0, false, 4, "audio/pcm"},
		{"speed 2", map[string]any{"input": ten, "speed": 2}, 0, true, 2, "audio/wav"},
		{"one word: the shortest", map[string]any{"input": "Hi"}, 0, true, MinSpeechSeconds, "audio/wav"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log bytes.Buffer
				cfg := Config{PrefillBase: time.Millisecond, PrefillPerToken: 100 * time.Microsecond, DecodeBase: -1, SpeechRTF: tt.rtf, TruthLog: &log}
				s := New(cfg)
				w := serve(s, http.MethodPost, "/v1/audio/speech", body(t, tt.req), nil)
				s.Close()
				checkSpeech(t, w, &log, tt.wav, tt.seconds, tt.contentTyp, s.cfg)
			})
		})
	}
}

func checkSpeech(t *testing.T, w *httptest.ResponseRecorder, log *bytes.Buffer, wav bool, seconds float64, contentType string, cfg Config) {
	t.Helper()
	pcm := 2 * int(seconds*pcmRate)
	size := pcm
	if wav {
		size += 44
		info, err := media.Probe(w.Body.Bytes())
		if err != nil || info.Format != "wav" || info.SampleRate != pcmRate || info.Channels != 1 || info.Seconds != seconds {
			t.Errorf("the WAV probes as %+v, %v; want %v s of 24 kHz mono", info, err, seconds)
		}
	}
	if w.Code != http.StatusOK || w.Body.Len() != size || w.Header().Get("Content-Type") != contentType ||
		w.Header().Get("Content-Length") != strconv.Itoa(size) {
		t.Errorf("got %d, %d bytes, %s, Content-Length %s; want 200, %d bytes of %s", w.Code, w.Body.Len(),
			w.Header().Get("Content-Type"), w.Header().Get("Content-Length"), size, contentType)
	}
	var r TruthRecord
	if err := json.Unmarshal(log.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	tokens := r.PromptTokens
	firstByte := ms(cfg.PrefillBase + time.Duration(tokens)*cfg.PrefillPerToken)
	if r.Endpoint != "speech" || r.AudioBytes != int64(size) || r.SpeechSeconds != seconds || !r.Complete || r.FirstByteMS != firstByte {
		t.Errorf("truth record %+v: want %d bytes of %v s, first byte at %v ms", r, size, seconds, firstByte)
	}
	// On the fake clock the pacing is exact: the last byte leaves
	// seconds / RTF after the first.
	if got, want := r.E2EMS-r.FirstByteMS, seconds/cfg.SpeechRTF*1000; got < want-0.001 || got > want+0.001 {
		t.Errorf("audio sent in %v ms after its first byte, want %v (%v s at %v× real time)", got, want, seconds, cfg.SpeechRTF)
	}
}

func TestSpeechRefusals(t *testing.T) {
	s := New(zeroCost(Config{}))
	defer s.Close()
	tests := []struct {
		name   string
		req    map[string]any
		status int
		want   string
	}{
		{"no input", map[string]any{"voice": "alloy"}, 400, "input: field required"},
		{"blank input", map[string]any{"input": "  \n"}, 400, "input must not be empty"},
		{"too long", map[string]any{"input": strings.Repeat("word ", 1000)}, 400, "input is 5000 characters; at most 4096"},
		{"mp3", map[string]any{"input": "hi", "response_format": "mp3"}, 400, "the simulator encodes wav and pcm"},
		{"opus", map[string]any{"input": "hi", "response_format": "opus"}, 400, "the simulator encodes wav and pcm"},
		{"unknown format", map[string]any{"input": "hi", "response_format": "midi"}, 400, "is unknown"},
		{"speed", map[string]any{"input": "hi", "speed": 10}, 400, "speed must be from 0.25 to 4"},
		{"unknown model", map[string]any{"input": "hi", "model": "tts-9"}, 404, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s, http.MethodPost, "/v1/audio/speech", body(t, tt.req), nil)
			if msg := errorMessage(w.Body.Bytes()); w.Code != tt.status || !strings.Contains(msg, tt.want) {
				t.Errorf("got %d %s, want %d containing %q", w.Code, w.Body, tt.status, tt.want)
			}
		})
	}
	if w := serve(s, http.MethodPost, "/v1/audio/speech", "{", nil); w.Code != http.StatusBadRequest {
		t.Errorf("a malformed body: %d %s, want 400", w.Code, w.Body)
	}
}

// Over a real connection the audio arrives progressively: the body is
// Content-Length bytes, its first byte well before its last, and the
// whole spread over about seconds / SpeechRTF.
func TestSpeechOverTheNetwork(t *testing.T) {
	s := New(Config{PrefillBase: time.Millisecond, PrefillPerToken: -1, SpeechRTF: 10})
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer s.Close()
	words := strings.TrimSpace(strings.Repeat("word ", 10)) // 4 s: 400 ms at 10×
	start := time.Now()
	resp, err := http.Post(srv.URL+"/v1/audio/speech", "application/json", strings.NewReader(body(t, map[string]any{"input": words})))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var first time.Time
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && first.IsZero() {
			first = time.Now()
		}
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	last := time.Now()
	if want := 44 + 2*4*pcmRate; got.Len() != want || resp.ContentLength != int64(want) {
		t.Errorf("%d bytes, Content-Length %d; want %d", got.Len(), resp.ContentLength, want)
	}
	spread := last.Sub(first)
	t.Logf("first byte after %v, the rest over %v (want ~400ms)", first.Sub(start), spread)
	if spread < 300*time.Millisecond || spread > 2*time.Second {
		t.Errorf("the audio arrived over %v, want about 400ms (4 s at 10× real time)", spread)
	}
}
