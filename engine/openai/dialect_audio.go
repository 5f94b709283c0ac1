package openai

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// transcriptionsDialect speaks POST /audio/transcriptions: a multipart
// form with the audio file, answered by JSON or, streamed, by
// transcript.text.delta events and a transcript.text.done with usage
// (OpenAI), or by chat-like chunks and [DONE] (vLLM).
type transcriptionsDialect struct{}

func (transcriptionsDialect) url(c *Client) string { return c.transcriptionsURL }

func (transcriptionsDialect) auth(c *Client, h http.Header) { bearer(c, h) }

func (transcriptionsDialect) body(req *engine.ChatRequest, _ bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	return nil, errors.New("a transcription's body is a form (see payload)")
}

// boundary separates a form's parts: the nonce keeps it out of any audio.
var boundary = "llmload-" + nonce

// payload builds the form: its fields, then the file, whose bytes are
// sent from the shared item as they are.
func (transcriptionsDialect) payload(req *engine.ChatRequest) (payload, error) {
	if req.Audio == nil {
		return payload{}, errors.New("a transcription needs audio")
	}
	var head bytes.Buffer
	field := func(name, value string) {
		fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, name, value)
	}
	fields := map[string]string{"model": req.Model, "response_format": "json", "stream": strconv.FormatBool(!req.NoStream)}
	if req.Language != "" {
		fields["language"] = req.Language
	}
	if req.Prompt != "" {
		fields["prompt"] = req.Prompt
	}
	if req.Temperature != nil {
		fields["temperature"] = strconv.FormatFloat(*req.Temperature, 'g', -1, 64)
	}
	for k, v := range req.Extra {
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return payload{}, fmt.Errorf("encoding extra field %q: %w", k, err)
			}
			s = string(b)
		}
		fields[k] = s
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if strings.ContainsAny(k, "\"\r\n") {
			return payload{}, fmt.Errorf("extra field %q: a form field's name has no quotes or line breaks", k)
		}
		field(k, fields[k])
	}
	a := req.Audio
	fmt.Fprintf(&head, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.%s\"\r\nContent-Type: %s\r\n\r\n",
		boundary, a.Format, a.MIME)
	tail := []byte("\r\n--" + boundary + "--\r\n")
	return payload{segs: [][]byte{head.Bytes(), a.Data(), tail}, n: int64(head.Len() + a.Size() + len(tail)),
		ctype: "multipart/form-data; boundary=" + boundary}, nil
}

func (transcriptionsDialect) endName() string { return "transcript.text.done or [DONE]" }

func (transcriptionsDialect) cutEnd(data []byte) bool {
	return isDone(data) || bytes.Contains(data, []byte(`"transcript.text.done"`))
}

// prompt is nothing: a transcription's input is its audio.
func (transcriptionsDialect) prompt(*engine.ChatRequest) *engine.ChatRequest {
	return &engine.ChatRequest{}
}

// transcriptEvent is an event of OpenAI's transcription stream.
type transcriptEvent struct {
	Type  string          `json:"type"`
	Delta string          `json:"delta"`
	Text  string          `json:"text"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// transcriptUsage is a transcription's usage: tokens (input_tokens are
// the audio's) or, for whisper-1, the audio's duration.
type transcriptUsage struct {
	Type   string     `json:"type"`
	Input  tokenCount `json:"input_tokens"`
	Output tokenCount `json:"output_tokens"`
	// vLLM's chat-like names
	Prompt     tokenCount `json:"prompt_tokens"`
	Completion tokenCount `json:"completion_tokens"`
	// The prompt tokens served from the server's cache, in either form.
	InputDetails  promptDetails `json:"input_tokens_details"`
	PromptDetails promptDetails `json:"prompt_tokens_details"`
}

func (u transcriptUsage) usage() usage {
	out := usage{Prompt: u.Input, Completion: u.Output, PromptDetails: u.InputDetails}
	if !out.PromptDetails.Cached.ok {
		out.PromptDetails = u.PromptDetails
	}
	if !out.Prompt.ok {
		out.Prompt = u.Prompt
	}
	if !out.Completion.ok {
		out.Completion = u.Completion
	}
	return out
}

// event applies an event of either form: OpenAI's typed events, or
// vLLM's chunks, which read as chat chunks.
func (transcriptionsDialect) event(s *stream, ev event) (delta, *engine.Error) {
	if isDone(ev.Data) || !bytes.Contains(ev.Data, []byte(`"transcript.text.`)) && !bytes.Contains(ev.Data, []byte(`"type"`)) {
		return chatDialect{}.event(s, ev)
	}
	var e transcriptEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return noText, undecodableEvent(err, ev.Data)
	}
	switch e.Type {
	case "transcript.text.delta":
		s.events++
		s.text.WriteString(e.Delta)
		return delta{gen: len(e.Delta), content: true, tokens: -1}, nil
	case "transcript.text.done":
		s.events++
		var u transcriptUsage
		if len(e.Usage) > 0 && json.Unmarshal(e.Usage, &u) == nil {
			s.tally.usage = u.usage()
		}
		if s.text.Len() == 0 && e.Text != "" {
			// A server that sends the whole text only at the end: it
			// arrived now, as one event.
			s.text.WriteString(e.Text)
			s.finished, s.res.FinishReason = true, "stop"
			s.end(ev.At)
			return delta{gen: len(e.Text), content: true, tokens: -1}, nil
		}
		s.finished, s.res.FinishReason = true, "stop"
		s.end(ev.At)
		return noText, nil
	case "error":
		return noText, &engine.Error{Class: engine.ErrAPI, Message: serverMessage(ev.Data)}
	}
	if len(e.Error) > 0 && string(e.Error) != "null" {
		return noText, &engine.Error{Class: engine.ErrAPI, Message: serverMessage(ev.Data)}
	}
	s.events++
	return noText, nil
}

// transcription is a whole transcription answer.
type transcription struct {
	Text  *string         `json:"text"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (transcriptionsDialect) complete(c *Client, res *engine.Result, data []byte, req *engine.ChatRequest) *engine.Error {
	var tr transcription
	if err := json.Unmarshal(data, &tr); err != nil {
		return undecodable("transcription", err, data)
	}
	if len(tr.Error) > 0 && string(tr.Error) != "null" || tr.Text == nil {
		if msg := serverMessage(data); msg != "" && tr.Text == nil {
			return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
		}
		return &engine.Error{Class: engine.ErrStreamMalformed, Message: "transcription without text: " + truncate(string(data), maxMessageLen)}
	}
	t := tally{content: *tr.Text}
	var u transcriptUsage
	if len(tr.Usage) > 0 && json.Unmarshal(tr.Usage, &u) == nil {
		t.usage = u.usage()
	}
	res.Text, res.FinishReason = *tr.Text, "stop"
	if *tr.Text != "" {
		t.textEvents = 1
	}
	res.TextEvents = t.textEvents
	c.countTokens(res, &t, transcriptionsDialect{}.prompt(req))
	return nil
}

// speechDialect speaks POST /audio/speech: JSON in, audio bytes out,
// timed from the first byte (see readAudio).
type speechDialect struct{}

func (speechDialect) url(c *Client) string { return c.speechURL }

func (speechDialect) auth(c *Client, h http.Header) { bearer(c, h) }

// speechBody is a speech request.
type speechBody struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice,omitempty"`
	ResponseFormat string `json:"response_format,omitempty"`
}

func (speechDialect) body(req *engine.ChatRequest, _ bool) ([]byte, error) {
	if req.Raw != nil {
		return req.Raw, nil
	}
	return encode(&speechBody{Model: req.Model, Input: req.Prompt, Voice: req.Voice, ResponseFormat: req.AudioFormat}, req.Extra)
}

func (speechDialect) endName() string { return "the end of the audio" }

func (speechDialect) cutEnd([]byte) bool { return false }

func (speechDialect) prompt(req *engine.ChatRequest) *engine.ChatRequest {
	return &engine.ChatRequest{Endpoint: engine.EndpointCompletions, Prompt: req.Prompt}
}

// event is never called: a speech answer is audio, not events; one that
// came as an event stream is not speech.
func (speechDialect) event(*stream, event) (delta, *engine.Error) {
	return noText, &engine.Error{Class: engine.ErrStreamMalformed, Message: "speech answered with an event stream, not audio"}
}

// complete reads a JSON answer to a speech request: an error object, or
// not audio at all.
func (speechDialect) complete(_ *Client, _ *engine.Result, data []byte, _ *engine.ChatRequest) *engine.Error {
	if msg := serverMessage(data); msg != "" {
		return &engine.Error{Class: engine.ErrAPI, Message: truncate(msg, maxMessageLen)}
	}
	return &engine.Error{Class: engine.ErrStreamMalformed, Message: "speech answered with JSON, not audio: " + truncate(string(data), maxMessageLen)}
}

// Bounds of a speech answer: the bytes kept to find the duration of a
// format without a fixed byte rate, and the whole answer.
const (
	maxKeptAudio = 16 << 20
	maxAudio     = 256 << 20
)

// readAudio measures an audio answer: TTFT (and TTFC) at its first byte,
// one ITL sample per gap between reads, E2E at its end, and how many
// bytes and seconds of audio it carried.
func (c *Client) readAudio(parent, ctx context.Context, res *engine.Result, body io.Reader, w *watchdog, req *engine.ChatRequest,
	ctype string, t0 *stamp) {
	res.Streamed = true
	buf := make([]byte, 32<<10)
	var kept []byte
	keep := true
	var last time.Time
	for {
		n, err := body.Read(buf)
		if n > 0 {
			at := t0.now(res.Start)
			if res.AudioBytes == 0 {
				res.TTFT, res.TTFC = at.Sub(res.Start), at.Sub(res.Start)
			} else {
				res.ITL = append(res.ITL, at.Sub(last))
			}
			last = at
			res.TextEvents++
			w.activity(at)
			res.AudioBytes += int64(n)
			if keep {
				if len(kept)+n > maxKeptAudio {
					keep = false
				} else {
					kept = append(kept, buf[:n]...)
				}
			}
			if res.AudioBytes > maxAudio {
				res.Err = &engine.Error{Class: engine.ErrStreamMalformed, Message: fmt.Sprintf("the audio ran past %d MB: stopped reading", maxAudio>>20)}
				return
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			res.Err = c.fail(parent, ctx, err, phaseBody)
			return
		}
	}
	if res.AudioBytes == 0 {
		res.Err = &engine.Error{Class: engine.ErrStreamTruncated, Message: "speech answered with no audio"}
		return
	}
	res.E2E = last.Sub(res.Start)
	res.FinishReason = "stop"
	res.AudioOut = audioSeconds(kept, res.AudioBytes, ctype, req.AudioFormat)
	if len(res.ITL) == 0 {
		res.ITL = nil
	}
}

// PCMRate is the sample rate of OpenAI's raw pcm speech: 24 kHz, 16-bit
// mono, little-endian.
const PCMRate = 24000

// audioSeconds is the duration of an audio answer of total bytes whose
// first bytes are head: from a WAV header's byte rate (a streaming WAV's
// data size is a placeholder, so the bytes received count), raw PCM's
// fixed rate, or the other formats' headers; 0 when unknown.
func audioSeconds(head []byte, total int64, ctype, format string) float64 {
	if format == "pcm" || ctype == "audio/pcm" || ctype == "audio/l16" {
		return float64(total) / (2 * PCMRate)
	}
	if len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE" {
		return wavSeconds(head, total)
	}
	if int64(len(head)) == total {
		if info, err := media.Probe(head); err == nil {
			return info.Seconds
		}
	}
	return 0
}

// wavSeconds reads a WAV's byte rate and where its data begins.
func wavSeconds(head []byte, total int64) float64 {
	rate := 0
	for p := 12; p+8 <= len(head); {
		id, size := string(head[p:p+4]), int(binary.LittleEndian.Uint32(head[p+4:p+8]))
		switch id {
		case "fmt ":
			if p+8+12 <= len(head) {
				rate = int(binary.LittleEndian.Uint32(head[p+8+8:]))
			}
		case "data":
			if rate <= 0 {
				return 0
			}
			return float64(total-int64(p+8)) / float64(rate)
		}
		if size < 0 || p+8+size+size&1 > len(head) || size > len(head) {
			return 0
		}
		p += 8 + size + size&1
	}
	return 0
}
