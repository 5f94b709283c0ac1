package sim

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Speech answers: MinSpeechSeconds is the shortest audio, speechChunk the
// audio sent per write.
const (
	// MinSpeechSeconds is the shortest speech answer, however short its
	// input.
	MinSpeechSeconds = 0.5
	// MaxSpeechInput is the longest input, in characters, as OpenAI's.
	MaxSpeechInput = 4096
	speechChunk    = pcmRate / 10 // samples: a tenth of a second
)

// speechRequest is the part of a speech request the simulator reads.
type speechRequest struct {
	Model          string   `json:"model"`
	Input          *string  `json:"input"`
	Voice          string   `json:"voice"`
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed"`
}

// speech is a judged speech request: what to send.
type speech struct {
	wav          bool
	seconds      float64
	pcmBytes     int
	promptTokens int
}

// serveSpeech answers POST /v1/audio/speech with 24 kHz 16-bit mono
// audio, WAV (a header whose sizes are the exact total, then the samples)
// or bare PCM: the first byte once the input's tokens are prefilled, the
// samples paced to be sent in their length / SpeechRTF.
func (s *Server) serveSpeech(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	arrived := arrival(r)
	rec := &TruthRecord{Arrival: arrived, Endpoint: "speech"}
	if s.truth != nil {
		sr := &statusRecorder{ResponseWriter: w}
		w = sr
		defer func() { rec.finish(sr.status); s.truth.write(rec) }()
	}
	sp, aerr := s.readSpeech(w, r, rec)
	if aerr != nil {
		s.rejected.Add(1)
		aerr.write(w)
		return
	}
	ctx, cancel := s.requestContext(r.Context())
	defer cancel()
	if err := s.speak(ctx, w, sp, rec); err != nil {
		s.canceled.Add(1)
		return
	}
	s.completed.Add(1)
}

// readSpeech reads the JSON body within MaxBodyBytes and judges it.
func (s *Server) readSpeech(w http.ResponseWriter, r *http.Request, rec *TruthRecord) (*speech, *apiError) {
	if aerr := checkContentType(r); aerr != nil {
		return nil, aerr
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	rec.BodyBytes = int64(len(body))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newAPIError(http.StatusRequestEntityTooLarge, "", "request body exceeds %d bytes", s.cfg.MaxBodyBytes)
	case err != nil:
		return nil, badRequest("", "reading the request body: %v", err)
	}
	var req speechRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("", "invalid JSON body: %v", err)
	}
	return req.judge(&s.cfg)
}

// judge checks the request and sizes its audio.
func (req *speechRequest) judge(cfg *Config) (*speech, *apiError) {
	switch {
	case req.Model != "" && req.Model != cfg.Model:
		return nil, newAPIError(http.StatusNotFound, "model", "The model %s does not exist.", quoteShort(req.Model))
	case req.Input == nil:
		return nil, badRequest("input", "input: field required (the text to speak)")
	case strings.TrimSpace(*req.Input) == "":
		return nil, badRequest("input", "input must not be empty")
	case utf8.RuneCountInString(*req.Input) > MaxSpeechInput:
		return nil, badRequest("input", "input is %d characters; at most %d", utf8.RuneCountInString(*req.Input), MaxSpeechInput)
	case req.Speed != nil && !(*req.Speed >= 0.25 && *req.Speed <= 4):
		return nil, badRequest("speed", "speed must be from 0.25 to 4, got %v", *req.Speed)
	}
	sp := &speech{promptTokens: CountTokens(*req.Input)}
	switch req.ResponseFormat {
	case "", "wav":
		sp.wav = true
	case "pcm":
	case "mp3", "opus", "aac", "flac":
		return nil, badRequest("response_format", "response_format %s: the simulator encodes wav and pcm", quoteShort(req.ResponseFormat))
	default:
		return nil, badRequest("response_format", "response_format %s is unknown; expected wav or pcm (or mp3, opus, aac, flac, which the simulator does not encode)",
			quoteShort(req.ResponseFormat))
	}
	sp.seconds = max(MinSpeechSeconds, float64(len(strings.Fields(*req.Input)))/WordsPerSecond)
	if req.Speed != nil {
		sp.seconds /= *req.Speed
	}
	sp.pcmBytes = 2 * int(math.Round(sp.seconds*pcmRate))
	return sp, nil
}

// speak sends sp: it waits for a batch slot and the prefill of the
// input (FixedTTFT in the fixed-delay mode), sends the headers and the
// WAV header, then each chunk of samples when the simulated model has
// made it, SpeechRTF times faster than it plays, so that the last byte
// leaves seconds / SpeechRTF after the first. Bare PCM has no header:
// its first chunk leaves with the first byte.
func (s *Server) speak(ctx context.Context, w http.ResponseWriter, sp *speech, rec *TruthRecord) error {
	var book booking
	if s.cfg.fixed() {
		book.end = rec.Arrival.Add(s.cfg.FixedTTFT)
	} else {
		if err := s.sched.acquire(ctx); err != nil {
			return err
		}
		defer s.sched.release()
		book = s.sched.prefill(sp.promptTokens)
	}
	first := book.end
	var z sleeper
	defer z.stop()
	if err := z.until(ctx, first); err != nil {
		if !s.cfg.fixed() {
			s.sched.cancel(book)
		}
		return err
	}
	total := sp.pcmBytes
	w.Header().Set("Content-Type", "audio/pcm")
	if sp.wav {
		total += 44
		w.Header().Set("Content-Type", "audio/wav")
	}
	w.Header().Set("Content-Length", strconv.Itoa(total))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rec.PromptTokens, rec.SpeechSeconds = sp.promptTokens, sp.seconds
	rec.ID = fmt.Sprintf("speech-sim-%d", s.seq.Add(1))
	sent := func(n int) error {
		if err := rc.Flush(); err != nil {
			return err
		}
		now := time.Now()
		if rec.AudioBytes == 0 {
			rec.first, rec.FirstByteMS = now, ms(now.Sub(rec.Arrival))
		}
		rec.last, rec.AudioBytes = now, rec.AudioBytes+int64(n)
		return nil
	}
	if sp.wav {
		if _, err := w.Write(wavHeader(sp.pcmBytes)); err != nil {
			return err
		}
		if err := sent(44); err != nil {
			return err
		}
	}
	perByte := float64(time.Second) / pcmRate / 2 / s.cfg.SpeechRTF
	for off := 0; off < sp.pcmBytes; off += 2 * speechChunk {
		n := min(2*speechChunk, sp.pcmBytes-off)
		due := first.Add(time.Duration(float64(off+n) * perByte))
		if off == 0 && !sp.wav {
			due = first // without a header, the first samples are the first byte
		}
		if err := z.until(ctx, due); err != nil {
			return err
		}
		if _, err := w.Write(tone[:n]); err != nil {
			return err
		}
		if err := sent(n); err != nil {
			return err
		}
	}
	rec.Complete = true
	s.metrics.completed(first.Sub(rec.Arrival), time.Since(rec.Arrival))
	return nil
}

// tone is a chunk of a quiet 240 Hz sine, a whole number of periods, so
// that chunks join without clicks.
var tone = func() []byte {
	b := make([]byte, 2*speechChunk)
	for i := range speechChunk {
		v := 3000 * math.Sin(2*math.Pi*240*float64(i)/pcmRate)
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(v)))
	}
	return b
}()
