package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// TruthRecord is one request as the simulator saw it, a line of the truth
// log (Config.TruthLog). Times are the server's own: Arrival when the
// request's headers reached its socket (the kernel's receive time, on
// Linux; else when the handler began), the first and last text chunk when
// they were handed to the connection, the end when the last byte was
// flushed.
// A client's figures for the same requests, less these, are the client's
// own error.
type TruthRecord struct {
	ID      string    `json:"id,omitempty"` // the answer's id and X-Request-Id header, a rejected request's too
	Arrival time.Time `json:"arrival"`
	Status  int       `json:"status"`           // the HTTP status written, 0 when none was (a reset)
	Tokens  int       `json:"tokens"`           // generated tokens sent
	TTFTMS  float64   `json:"ttft_ms,omitzero"` // first text chunk sent − arrival
	// TPOTMS is (last text chunk − first) / (tokens − 1), DESIGN.md's
	// TPOT, with two or more tokens.
	TPOTMS float64 `json:"tpot_ms,omitzero"`
	E2EMS  float64 `json:"e2e_ms"` // response complete − arrival
	// Complete says the answer was generated and sent to its end.
	Complete bool `json:"complete"`
	// MaxTokens is the output limit the request asked for
	// (max_completion_tokens, else max_tokens; max_output_tokens on the
	// Responses API), 0 when it asked none. MinTokens and IgnoreEOS are
	// vLLM's extensions, present only when sent. These, and Prompt, are
	// known only for a request that decoded (valid, or judged so far).
	MaxTokens int   `json:"max_tokens"`
	MinTokens *int  `json:"min_tokens,omitempty"`
	IgnoreEOS *bool `json:"ignore_eos,omitempty"`
	// PromptTokens and CachedTokens are the prompt's tokens and those of
	// them found in the prefix cache, as usage reports them (on the
	// Messages API, input_tokens + cache_read_input_tokens and
	// cache_read_input_tokens); 0 for a request not answered.
	PromptTokens int `json:"prompt_tokens"`
	CachedTokens int `json:"cached_tokens"`
	// Prompt is the prompt's text as received, each message's (system or
	// instructions first) joined by newlines, or the completions prompt;
	// only with Config.TruthPrompts.
	Prompt string `json:"prompt,omitempty"`
	// BodyBytes is the request body's length as read.
	BodyBytes int64 `json:"body_bytes,omitempty"`
	// Images, Audios and Videos count the media items of a request that
	// decoded; AudioSeconds is its audio's length (a transcription's
	// file included) and MediaTokens the prompt tokens they added, a part
	// of PromptTokens.
	Images       int     `json:"images,omitempty"`
	Audios       int     `json:"audios,omitempty"`
	Videos       int     `json:"videos,omitempty"`
	AudioSeconds float64 `json:"audio_seconds,omitzero"`
	MediaTokens  int     `json:"media_tokens,omitempty"`
	// Endpoint is "transcriptions" or "speech" for those routes, "" for
	// the generating ones.
	Endpoint string `json:"endpoint,omitempty"`
	// SpeechSeconds and AudioBytes are a speech answer's audio length and
	// the bytes of its body sent (header included); FirstByteMS is when
	// its first byte was sent − arrival.
	SpeechSeconds float64 `json:"speech_seconds,omitzero"`
	AudioBytes    int64   `json:"audio_bytes,omitempty"`
	FirstByteMS   float64 `json:"first_byte_ms,omitzero"`

	first, last time.Time
}

// asked notes what the request asked for; nil does nothing.
func (r *TruthRecord) asked(a *asked) {
	if r == nil {
		return
	}
	r.MaxTokens, r.MinTokens, r.IgnoreEOS, r.Prompt = a.maxTokens, a.minTokens, a.ignoreEOS, a.prompt
	r.media(a.media)
}

// media notes a request's media; nil m or r does nothing.
func (r *TruthRecord) media(m *mediaCount) {
	if r == nil || m == nil {
		return
	}
	r.Images, r.Audios, r.Videos = m.images, m.audios, m.videos
	r.AudioSeconds, r.MediaTokens = m.audioSeconds, m.tokens
}

// text notes a chunk carrying n generated tokens, handed to the
// connection at sent and flushed; nil does nothing.
func (r *TruthRecord) text(n int, now time.Time) {
	if r == nil {
		return
	}
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
	r.Tokens += n
}

// finish fills the durations once the handler is done.
func (r *TruthRecord) finish(status int) {
	r.Status = status
	r.E2EMS = ms(time.Since(r.Arrival))
	if !r.first.IsZero() {
		r.TTFTMS = ms(r.first.Sub(r.Arrival))
	}
	if r.Tokens >= 2 {
		r.TPOTMS = ms(r.last.Sub(r.first)) / float64(r.Tokens-1)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// truthLog writes TruthRecords as JSON lines, buffered; one mutex keeps
// lines whole. Safe for concurrent use.
type truthLog struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error // the first write error; later records are dropped
}

func newTruthLog(w io.Writer) *truthLog {
	if w == nil {
		return nil
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	return &truthLog{w: bw, enc: json.NewEncoder(bw)}
}

func (l *truthLog) write(r *TruthRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.enc.Encode(r)
	}
}

// flush writes what is buffered and returns the first error seen.
func (l *truthLog) flush() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.w.Flush()
	}
	return l.err
}

// statusRecorder remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection's Flush and Hijack.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
