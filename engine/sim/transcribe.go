package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/media"
)

// WordsPerSecond is the pace of the simulated speech: a transcript has
// about this many words per second of audio, and a speech answer lasts
// its input's words divided by it.
const WordsPerSecond = 2.5

// serveTranscription answers POST /v1/audio/transcriptions: a multipart
// form with the audio in its file field. The audio's tokens are the
// prompt the simulated model prefills; the transcript is seeded words,
// decoded at the batch's pace.
func (s *Server) serveTranscription(w http.ResponseWriter, r *http.Request) {
	x, w := s.begin(w, r, "transcriptions")
	defer s.end(r, x)
	c, aerr := s.readTranscription(w, r, x.truth)
	var key uint64
	if c != nil {
		key = c.key
	}
	x.id, x.c = s.newID(apiTranscription, key), c
	w.Header().Set(RequestIDHeader, x.id)
	if x.truth != nil {
		x.truth.ID = x.id
	}
	if aerr != nil {
		s.rejected.Add(1)
		aerr.write(w)
		return
	}
	c.arrived, c.truth, c.id = x.arrived, x.truth, x.id
	s.answer(w, r, c)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

// readTranscription parses the form within MaxBodyBytes and judges it.
func (s *Server) readTranscription(w http.ResponseWriter, r *http.Request, rec *TruthRecord) (*completion, *apiError) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		return nil, newAPIError(http.StatusUnsupportedMediaType, "", "unsupported Content-Type %s; expected multipart/form-data",
			quoteShort(r.Header.Get("Content-Type")))
	}
	body := &countingReader{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)}
	r.Body = body
	err := r.ParseMultipartForm(s.cfg.MaxBodyBytes)
	if rec != nil {
		rec.BodyBytes = body.n
	}
	if r.MultipartForm != nil {
		defer func() { _ = r.MultipartForm.RemoveAll() }()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newAPIError(http.StatusRequestEntityTooLarge, "", "request body exceeds %d bytes", s.cfg.MaxBodyBytes)
	case err != nil:
		return nil, badRequest("", "reading the multipart form: %v", err)
	}
	form := transcriptionForm(r)
	data, aerr := form.audio(r, s.cfg.MaxImageBytes)
	if aerr != nil {
		return nil, aerr
	}
	c, aerr := form.completion(&s.cfg, data)
	if c != nil {
		rec.asked(&c.asked)
	}
	return c, aerr
}

// transcriptionRequest is the form's fields the simulator reads.
type transcriptionRequest struct {
	model, language, prompt, format string
	stream                          string
	seconds                         float64 // the audio's, once probed
}

func transcriptionForm(r *http.Request) *transcriptionRequest {
	v := r.MultipartForm.Value
	first := func(k string) string {
		if len(v[k]) == 0 {
			return ""
		}
		return v[k][0]
	}
	return &transcriptionRequest{model: first("model"), language: first("language"), prompt: first("prompt"),
		format: first("response_format"), stream: first("stream")}
}

// audio reads the file field and checks it is a whole audio file of at
// most limit bytes whose length its header says.
func (t *transcriptionRequest) audio(r *http.Request, limit int) ([]byte, *apiError) {
	files := r.MultipartForm.File["file"]
	if len(files) == 0 {
		return nil, badRequest("file", "file: field required (the audio to transcribe)")
	}
	if files[0].Size > int64(limit) {
		return nil, badRequest("file", "file: the audio is %s, above the limit of %s", media.Bytes(files[0].Size), media.Bytes(int64(limit)))
	}
	f, err := files[0].Open()
	if err != nil {
		return nil, badRequest("file", "file: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, badRequest("file", "file: %v", err)
	}
	info, aerr := probeItem(where{"file", "file"}, media.Audio, "", "", data)
	if aerr != nil {
		return nil, aerr
	}
	if !(info.Seconds > 0) {
		return nil, badRequest("file", "file: the %s header does not say how long the audio is", info.Format)
	}
	t.seconds = info.Seconds
	return data, nil
}

// completion judges the form's other fields and decides the transcript:
// the audio's tokens and the prompt's as its prompt, about
// WordsPerSecond words a second of audio.
func (t *transcriptionRequest) completion(cfg *Config, data []byte) (*completion, *apiError) {
	if t.model != "" && t.model != cfg.Model {
		return nil, newAPIError(http.StatusNotFound, "model", "The model %s does not exist.", quoteShort(t.model))
	}
	switch t.format {
	case "", "json", "text":
	case "verbose_json", "srt", "vtt":
		return nil, badRequest("response_format", "response_format %s is not simulated; expected json or text", quoteShort(t.format))
	default:
		return nil, badRequest("response_format", "response_format %s is unknown; expected json, text, verbose_json, srt or vtt", quoteShort(t.format))
	}
	stream := false
	if t.stream != "" {
		var err error
		if stream, err = strconv.ParseBool(t.stream); err != nil {
			return nil, badRequest("stream", "stream must be true or false, got %s", quoteShort(t.stream))
		}
	}
	h := fnv.New64a()
	fmt.Fprint(h, cfg.Seed, len(data), t.language, t.prompt)
	_, _ = h.Write(data[max(0, len(data)-256):])
	return &completion{
		stream:       stream,
		includeUsage: true,
		promptTokens: audioTokens(t.seconds) + CountTokens(t.prompt),
		outputTokens: max(1, int(math.Round(t.seconds*WordsPerSecond))),
		finish:       "stop",
		key:          h.Sum64(),
		api:          apiTranscription,
		asked: asked{prompt: t.truthPrompt(cfg),
			media: &mediaCount{audios: 1, audioSeconds: t.seconds, tokens: audioTokens(t.seconds)}},
		textOnly: t.format == "text",
	}, nil
}

func (t *transcriptionRequest) truthPrompt(cfg *Config) string {
	if cfg.TruthPrompts && cfg.TruthLog != nil {
		return t.prompt
	}
	return ""
}

// transcriptionUsage is OpenAI's usage of a transcription, in tokens.
type transcriptionUsage struct {
	Type              string `json:"type"`
	InputTokens       int    `json:"input_tokens"`
	InputTokenDetails struct {
		TextTokens  int `json:"text_tokens"`
		AudioTokens int `json:"audio_tokens"`
	} `json:"input_token_details"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

func (c *completion) transcriptionUsage() *transcriptionUsage {
	u := &transcriptionUsage{Type: "tokens", InputTokens: c.promptTokens, OutputTokens: c.usageTokens()}
	u.InputTokenDetails.AudioTokens = c.asked.media.tokens
	u.InputTokenDetails.TextTokens = c.promptTokens - u.InputTokenDetails.AudioTokens
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// answerTranscript generates the transcript whole: {"text", "usage"},
// or the bare text for response_format=text.
func (s *Server) answerTranscript(ctx context.Context, w http.ResponseWriter, c *completion, _ string) error {
	text, err := s.generateWhole(ctx, w, c)
	if err != nil {
		return err
	}
	if c.textOnly {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, text+"\n")
		return nil
	}
	writeJSON(w, http.StatusOK, struct {
		Text  string              `json:"text"`
		Usage *transcriptionUsage `json:"usage"`
	}{text, c.transcriptionUsage()})
	return nil
}

// transcriptEvent is an event of a streamed transcription, OpenAI's.
type transcriptEvent struct {
	Type  string              `json:"type"`
	Delta string              `json:"delta,omitempty"`
	Text  string              `json:"text,omitempty"`
	Usage *transcriptionUsage `json:"usage,omitempty"`
}

// streamTranscript sends transcript.text.delta events as the words are
// decoded, then transcript.text.done with the whole text and the usage.
func (s *Server) streamTranscript(ctx context.Context, w http.ResponseWriter, c *completion, _ string) error {
	var es *eventStream
	var text strings.Builder
	err := s.generate(ctx, c, func(t string) error {
		if es == nil {
			es = newEventStream(w)
		}
		text.WriteString(t)
		return es.send(transcriptEvent{Type: "transcript.text.delta", Delta: t})
	})
	if err != nil {
		return err
	}
	return es.send(transcriptEvent{Type: "transcript.text.done", Text: text.String(), Usage: c.transcriptionUsage()})
}

// pcmRate is the sample rate of speech answers: 24 kHz 16-bit mono, as
// OpenAI's pcm format.
const pcmRate = 24000

// wavHeader is the 44-byte header of 16-bit mono PCM of dataBytes.
func wavHeader(dataBytes int) []byte {
	b := make([]byte, 44)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+dataBytes))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], pcmRate)
	binary.LittleEndian.PutUint32(b[28:], pcmRate*2)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(dataBytes))
	return b
}
