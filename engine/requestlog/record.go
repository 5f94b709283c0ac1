package requestlog

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/redact"
)

// cell is one value of a request record in both renderings: CSV text and a
// JSON token. An absent value is an empty cell and JSON null.
type cell struct {
	text string
	json string
}

var absent = cell{json: "null"}

func strCell(s string) cell {
	if s == "" {
		return absent
	}
	return cell{text: s, json: jsonString(s)}
}

func intCell(n int) cell {
	s := strconv.Itoa(n)
	return cell{text: s, json: s}
}

// countCell is absent for 0: these counts are 0 exactly when nobody
// counted.
func countCell(n int) cell {
	if n == 0 {
		return absent
	}
	return intCell(n)
}

func boolCell(b bool) cell {
	s := strconv.FormatBool(b)
	return cell{text: s, json: s}
}

// msCell prints a duration in milliseconds with three decimals (µs).
func msCell(d time.Duration) cell {
	s := strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
	return cell{text: s, json: s}
}

// measuredCell is absent for 0, which engine.Result uses for "not measured".
func measuredCell(d time.Duration) cell {
	if d == 0 {
		return absent
	}
	return msCell(d)
}

// tokensCell shows a token count when a source vouches for it, so a real
// 0 (an empty answer) stays 0 while an uncounted one stays empty.
func tokensCell(n int, source string) cell {
	if source == "" {
		return countCell(n)
	}
	return intCell(n)
}

// tagsCell writes tags as k=v;k=v sorted by key in CSV, and as an object
// in JSON. '%', ';' and '=' inside keys and values are percent-encoded, so
// the CSV form splits back unambiguously.
func tagsCell(tags map[string]string) cell {
	if len(tags) == 0 {
		return absent
	}
	keys := slices.Sorted(maps.Keys(tags))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tagEscaper.Replace(k) + "=" + tagEscaper.Replace(tags[k])
	}
	obj, err := json.Marshal(tags) // sorted keys; a map of strings cannot fail
	if err != nil {
		return absent
	}
	return cell{text: strings.Join(parts, ";"), json: string(obj)}
}

var tagEscaper = strings.NewReplacer("%", "%25", ";", "%3B", "=", "%3D")

// jsonString quotes s without escaping <, > and &, which server error
// pages are full of.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil { // a string always encodes
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// requestRecord turns one sample into its record, in requestColumns order.
func requestRecord(s *engine.Sample, start time.Time) []cell {
	class, msg := "", ""
	if s.Err != nil {
		// The client redacted the credentials it sent; this is the last
		// guard against any that look like one (a Basic or Bearer value,
		// an sk- key), from whatever produced the sample.
		class, msg = s.Err.Class, redact.Credentials(s.Err.Message)
	}
	offset, lag := absent, absent
	if !s.Start.IsZero() {
		offset = msCell(s.Start.Sub(start))
		if !s.Scheduled.IsZero() {
			lag = msCell(s.Start.Sub(s.Scheduled))
		}
	}
	status := absent
	if s.Status != 0 {
		status = intCell(s.Status)
	}
	srvPrompt, srvTPOT, srvPromptN, srvCached := absent, absent, absent, absent
	if t := s.Server; t != nil {
		srvPrompt, srvTPOT = floatMSCell(t.PromptMS), floatMSCell(t.PredictedPerTokenMS)
		srvPromptN, srvCached = intCell(t.PromptN), intCell(t.CachedN)
	}
	parts := partCells(&s.Result)
	return []cell{
		offset, strCell(s.Scenario), strCell(s.Stage), tagsCell(s.Tags), status, strCell(class), strCell(msg),
		measuredCell(s.TTFB), measuredCell(s.TTFT), measuredCell(s.TTFC), measuredCell(s.E2E), measuredCell(s.TPOT),
		tokensCell(s.InputTokens, s.InputTokensSource), strCell(s.InputTokensSource),
		tokensCell(s.OutputTokens, s.TokensSource), strCell(s.TokensSource),
		countCell(s.ReasoningTokens), countCell(s.ClientOutputTokens),
		boolCell(s.Streamed), lag, strCell(s.Dirty), boolCell(s.Warmup), measuredCell(s.Connect),
		srvPrompt, srvTPOT, srvPromptN, srvCached,
		strCell(cmp.Or(s.API, engine.EndpointChat)), countCell(len(s.ToolCalls)), countCell(s.Inputs),
		countCell(s.CachedTokens), traceRecordCell(s.TraceRecord), strCell(s.Target), measuredCell(s.TLS),
		measuredCell(s.Encode), measuredCell(s.Upload), bytesCell(s.BodyBytes),
		countCell(s.Images), countCell(s.Audios), countCell(s.Videos), secondsCell(s.AudioIn),
		countCell(s.MediaTokens), secondsCell(s.AudioOut), bytesCell(s.AudioBytes),
		strCell(s.TraceID), strCell(s.RequestID),
		parts[0], parts[1], parts[2], parts[3], parts[4], parts[5],
	}
}

// partCells are a request's breakdown: its source, then the residual,
// queue, prefill, decode and tail, each absent where not timed.
func partCells(r *engine.Result) [6]cell {
	out := [6]cell{absent, absent, absent, absent, absent, absent}
	if r.Span == nil && r.Server == nil {
		return out
	}
	b := r.Breakdown()
	if b.Source == "" {
		return out
	}
	out[0], out[1], out[3] = strCell(b.Source), signedMSCell(b.Residual), signedMSCell(b.Prefill)
	for i, d := range []time.Duration{b.Queue, b.Decode, b.Tail} {
		if d != engine.Absent {
			out[[]int{2, 4, 5}[i]] = signedMSCell(d)
		}
	}
	return out
}

// signedMSCell prints a duration in ms to the microsecond, negative ones
// included (a residual the server's timing exceeds).
func signedMSCell(d time.Duration) cell {
	return floatMSCell(float64(d) / float64(time.Millisecond))
}

// bytesCell is a byte count, absent for 0 (nothing sent or received).
func bytesCell(n int64) cell {
	if n == 0 {
		return absent
	}
	s := strconv.FormatInt(n, 10)
	return cell{text: s, json: s}
}

// secondsCell prints seconds of audio to the millisecond; absent for 0.
func secondsCell(x float64) cell {
	if x == 0 {
		return absent
	}
	s := strconv.FormatFloat(x, 'f', 3, 64)
	return cell{text: s, json: s}
}

// traceRecordCell shows the 0-based record index of a trace iteration's
// sample; engine.Sample.TraceRecord holds it plus one, so that 0 can mean
// "not a trace iteration".
func traceRecordCell(n int) cell {
	if n <= 0 {
		return absent
	}
	return intCell(n - 1)
}

// floatMSCell prints milliseconds a server reported, to the microsecond.
func floatMSCell(ms float64) cell {
	s := strconv.FormatFloat(ms, 'f', 3, 64)
	return cell{text: s, json: s}
}

// recordEncoder writes records in one format; it is used by one goroutine.
type recordEncoder interface {
	write(rec []cell) error
	flush() error
}

type csvEncoder struct{ w *csv.Writer }

func (e csvEncoder) header() error {
	if err := e.w.Write(requestColumns[:]); err != nil {
		return err
	}
	return e.flush()
}

func (e csvEncoder) write(rec []cell) error {
	row := make([]string, len(rec))
	for i, c := range rec {
		row[i] = c.text
	}
	return e.w.Write(row)
}

func (e csvEncoder) flush() error {
	e.w.Flush()
	return e.w.Error()
}

type jsonlEncoder struct{ w *bufio.Writer }

// write builds the object by hand so that keys keep column order. The
// columns from firstOmittable on are left out when empty.
func (e jsonlEncoder) write(rec []cell) error {
	e.w.WriteByte('{')
	for i, c := range rec {
		if i >= firstOmittable && c == absent {
			continue
		}
		if i > 0 {
			e.w.WriteByte(',')
		}
		e.w.WriteString(`"` + requestColumns[i] + `":`)
		e.w.WriteString(c.json)
	}
	_, err := e.w.WriteString("}\n")
	return err // bufio.Writer keeps its first error, so the last call reports it
}

func (e jsonlEncoder) flush() error { return e.w.Flush() }
