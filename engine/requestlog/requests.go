// Package requestlog writes one record per request while the load runs
// (--requests FILE, CSV or JSONL): a sink of the run, fed as requests end,
// not a rendering of its result.
package requestlog

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/outbox"
)

// Request record formats for NewRequestWriter.
const (
	FormatCSV   = "csv"   // RFC 4180, a header row, then one row per request
	FormatJSONL = "jsonl" // one JSON object per line, keys in column order
)

// Errors NewRequestWriter returns.
var (
	ErrRequestFormat = errors.New("unknown request record format")
	ErrNilWriter     = errors.New("request records: nil writer")
)

// Columns of a per-request record, in file order; they are the CSV header
// and the JSONL keys, and they only ever grow at the end. Times are in
// milliseconds with three decimals. A value that was not measured or does
// not apply is an empty cell (JSON null), never 0.
const (
	colStartOffset  = "start_offset_ms"      // Sample.Start − the run's start
	colScenario     = "scenario"             // scenario name
	colStage        = "stage"                // stage name
	colTags         = "tags"                 // CSV: k=v;k=v sorted by key; JSONL: an object
	colStatus       = "status"               // HTTP status; empty when no response arrived
	colErrorClass   = "error_class"          // DESIGN.md's error class; empty on success
	colErrorMessage = "error_message"        // as the client recorded it, credentials redacted
	colTTFB         = "ttfb_ms"              // headers received − t0
	colTTFT         = "ttft_ms"              // first text of any kind − t0
	colTTFC         = "ttfc_ms"              // first answer (content) text − t0
	colE2E          = "e2e_ms"               // end of stream − t0
	colTPOT         = "tpot_ms"              // per output token after the first
	colInputTokens  = "input_tokens"         // empty when nothing counted them
	colInputSource  = "input_tokens_source"  // usage, tokenizer or events
	colOutputTokens = "output_tokens"        // empty when nothing counted them
	colTokensSource = "tokens_source"        // source of output_tokens
	colReasoning    = "reasoning_tokens"     // empty when the server reported none
	colClientTokens = "client_output_tokens" // offline tokenizer's count; empty when not counted
	colStreamed     = "streamed"             // true or false
	colScheduledLag = "scheduled_lag_ms"     // Start − Scheduled; empty without an intended start
	colDirty        = "dirty"                // dirty-data kind; empty for clean requests
	colWarmup       = "warmup"               // true or false
	colConnect      = "connect_ms"           // t0 − issued: getting a connection and writing to it
	// The server's own timing of the request, where it sends one
	// (llama.cpp's "timings"); empty otherwise.
	colServerPrompt       = "server_prompt_ms"     // prompt processing, as the server timed it
	colServerTPOT         = "server_tpot_ms"       // the server's time per output token after the first
	colServerPromptTokens = "server_prompt_tokens" // prompt tokens it processed
	colServerCached       = "server_cached_tokens" // prompt tokens it took from its prefix cache
	colAPI                = "api"                  // the endpoint: chat, completions, responses, messages, embeddings
	colToolCalls          = "tool_calls"           // tool calls in the answer; empty when none
	colInputs             = "inputs"               // inputs embedded (embeddings); empty otherwise
	// colCached is the prompt tokens the server says it served from its
	// prefix cache (engine.Result.CachedTokens); empty when it reported
	// none, which cannot be told from a server that does not report them.
	colCached = "cached_tokens"
	// colTraceRecord is the 0-based index of the record a trace scenario's
	// iteration replayed, in the trace file's order (its first record is
	// 0, as in engine.TraceArrival.Record); empty outside trace scenarios.
	colTraceRecord = "trace_record"
	// colTarget names the endpoint of options.targets that served the
	// request; empty in a run with one target.
	colTarget = "target"
	// colTLS is the TLS handshake's part of connect_ms; empty on a plain
	// or reused connection. It belongs beside connect_ms, but columns only
	// grow at the end.
	colTLS = "tls_ms"
	// The media columns (engine.Result's media figures), empty when 0. In
	// JSONL they are left out rather than null when empty, so that a text
	// request's object reads as it did before them; CSV keeps every
	// column, its header being fixed.
	colEncode      = "encode_ms"    // the client's time to build the body, outside every latency
	colUpload      = "upload_ms"    // t0 → the body's upload (engine.Result.Upload), inside TTFT
	colBodyBytes   = "body_bytes"   // the request body's length
	colImages      = "images"       // image parts sent
	colAudios      = "audios"       // audio parts sent
	colVideos      = "videos"       // video parts sent
	colAudioIn     = "audio_in_s"   // seconds of audio sent
	colMediaTokens = "media_tokens" // prompt tokens of the media parts, from usage
	colAudioOut    = "audio_out_s"  // seconds of speech received
	colAudioBytes  = "audio_bytes"  // bytes of speech received
	// Request identity: the W3C trace id the request carried, and the
	// server's own id of it (the answer's "id", or an x-request-id
	// header), which its logs and trace spans name.
	colTraceID   = "trace_id"
	colRequestID = "request_id"
	// Where the time went (engine.Breakdown), from the server's span or
	// llama.cpp's timings; empty when the server timed nothing.
	colPartsSource = "parts_source" // span or timings
	colResidual    = "residual_ms"  // TTFT − upload − queue − prefill: network and server front; may be negative
	colQueue       = "queue_ms"     // waiting for the scheduler (spans only)
	colPrefill     = "prefill_ms"   // the prompt's processing to the first token
	colDecode      = "decode_ms"    // the rest of the generation
	colTail        = "tail_ms"      // E2E − TTFT − decode: the last token's way back
	// firstOmittable is the first column JSONL leaves out when empty.
	firstOmittable    = 34
	numRequestColumns = 52
)

var requestColumns = [numRequestColumns]string{
	colStartOffset, colScenario, colStage, colTags, colStatus, colErrorClass, colErrorMessage,
	colTTFB, colTTFT, colTTFC, colE2E, colTPOT, colInputTokens, colInputSource, colOutputTokens,
	colTokensSource, colReasoning, colClientTokens, colStreamed, colScheduledLag, colDirty, colWarmup, colConnect,
	colServerPrompt, colServerTPOT, colServerPromptTokens, colServerCached,
	colAPI, colToolCalls, colInputs, colCached, colTraceRecord, colTarget, colTLS,
	colEncode, colUpload, colBodyBytes, colImages, colAudios, colVideos, colAudioIn, colMediaTokens, colAudioOut, colAudioBytes,
	colTraceID, colRequestID, colPartsSource, colResidual, colQueue, colPrefill, colDecode, colTail,
}

// RequestColumns returns the names of a per-request record's columns, in
// file order (see the column constants in requests.go for their meaning).
func RequestColumns() []string { return slices.Clone(requestColumns[:]) }

// DefaultRequestBuffer is how many samples Write queues before it blocks:
// enough to absorb a burst of completions while the disk is slow.
const DefaultRequestBuffer = 4096

// requestFlushEvery bounds how long a record waits in memory, so an
// interrupted run loses at most this much of its per-request file.
const requestFlushEvery = time.Second

// RequestWriter writes one record per request sample, as samples arrive.
// Safe for concurrent use: Write hands the sample to one writer goroutine
// (buffered channel; never drops; blocks when full), which flushes at
// least every second. Close flushes and returns the first error.
type RequestWriter struct {
	queue *outbox.Outbox[engine.Sample]
	done  chan struct{}
	err   error // written by the writer goroutine, read after done is closed
	enc   recordEncoder
	start time.Time
	flush time.Duration
}

// NewRequestWriter starts a writer of per-request records in format
// (FormatCSV or FormatJSONL) to w; offsets are measured from start. The CSV
// header is written and flushed at once, so an unwritable w fails here.
func NewRequestWriter(w io.Writer, format string, start time.Time) (*RequestWriter, error) {
	if w == nil {
		return nil, ErrNilWriter
	}
	var enc recordEncoder
	switch format {
	case FormatCSV:
		c := csvEncoder{w: csv.NewWriter(w)}
		if err := c.header(); err != nil {
			return nil, fmt.Errorf("request records: write CSV header: %w", err)
		}
		enc = c
	case FormatJSONL:
		enc = jsonlEncoder{w: bufio.NewWriter(w)}
	default:
		return nil, fmt.Errorf("%w %q: want %q or %q", ErrRequestFormat, format, FormatCSV, FormatJSONL)
	}
	rw := &RequestWriter{
		queue: outbox.New[engine.Sample](DefaultRequestBuffer),
		done:  make(chan struct{}),
		enc:   enc,
		start: start,
		flush: requestFlushEvery,
	}
	go rw.run()
	return rw, nil
}

// Write queues one sample's record; it blocks while the queue is full
// rather than lose it. The sample's Tags map must not change afterwards.
// A Write after Close is ignored: the file is already complete.
func (w *RequestWriter) Write(s engine.Sample) {
	// The record needs none of these, and the queue should not keep a
	// whole answer alive per entry.
	s.Text, s.ITL, s.TokenITL = "", nil, nil
	w.queue.Send(s)
}

// Close writes what is queued, flushes, and returns the first error of
// the writer's life. Calling it again returns the same error.
func (w *RequestWriter) Close() error {
	w.queue.Close()
	<-w.done
	return w.err
}

// run is the one goroutine that encodes and writes. After the first error
// it keeps draining the queue, so that writers never block on a dead file.
func (w *RequestWriter) run() {
	defer close(w.done)
	tick := time.NewTicker(w.flush)
	defer tick.Stop()
	pending := false
	for {
		select {
		case s, ok := <-w.queue.Receive():
			if !ok {
				w.keep(w.enc.flush())
				return
			}
			if w.err == nil {
				w.keep(w.enc.write(requestRecord(&s, w.start)))
				pending = true
			}
		case <-tick.C:
			if pending && w.err == nil {
				w.keep(w.enc.flush())
				pending = false
			}
		}
	}
}

// keep records the first error.
func (w *RequestWriter) keep(err error) {
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("request records: %w", err)
	}
}
