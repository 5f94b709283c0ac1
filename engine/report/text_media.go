package report

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeMedia writes, for runs that sent media or used the speech
// endpoints, what the media requests carried and cost per stage, then
// the speech answers' pace. A text-only run writes nothing.
func writeMedia(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	if rows := mediaRows(stages, labels); len(rows) > 0 {
		b.WriteString("\nmedia (the requests that sent images, audio or video)\n")
		writeRows(b, []string{"requests", "images/s", "audio s/s", "MB/s", "tokens/image", "encode p50 ", "p99 ", "upload p50 ", "p99 "}, rows)
		b.WriteString(mediaNote + "\n")
	}
	if rows := speechRows(stages, labels); len(rows) > 0 {
		b.WriteString("\nspeech (audio received)\n")
		writeRows(b, []string{"requests", "audio s/s", "RTF p50", "p90", "p99", "KB/s p50", "first audio p50 ", "p99 "}, rows)
		b.WriteString(speechNote + "\n")
	}
}

// writeRows writes a table of rows whose first cell is a stage label,
// left-aligned under "stage", the figures after it right-aligned.
func writeRows(b *bytes.Buffer, head []string, rows [][]string) {
	labels := make([]string, len(rows))
	for i, r := range rows {
		labels[i] = r[0]
	}
	stage, labels := leftColumn("stage", labels)
	tw := newTable(b)
	row(tw, append([]string{stage}, head...)...)
	for i, r := range rows {
		row(tw, append([]string{labels[i]}, r[1:]...)...)
	}
	tw.Flush()
}

// The notes under the media and speech tables.
const (
	mediaNote  = "encode: building the body, in no latency; upload: t0 to its last byte, inside TTFT (ms); MB = 10^6 bytes"
	speechNote = "RTF: seconds of audio per second of E2E, per request (above 1: faster than real time); first audio: TTFT (ms)"
)

// mediaHead and speechHead are the HTML tables' headers.
var (
	mediaHead  = []string{"stage", "requests", "images/s", "audio s/s", "MB/s", "tokens/image", "encode p50", "encode p99", "upload p50", "upload p99"}
	speechHead = []string{"stage", "requests", "audio s/s", "RTF p50", "RTF p90", "RTF p99", "KB/s p50", "first audio p50", "first audio p99"}
)

// mediaRows are the media table's rows, label first: one per stage whose
// requests sent media; none for a run without.
func mediaRows(stages []metrics.StageSummary, labels []string) [][]string {
	var rows [][]string
	for i, s := range stages {
		m := s.Media
		if m == nil || !sentMedia(m) {
			continue
		}
		rows = append(rows, []string{labels[i], fmt.Sprint(m.Requests), rateCell(m.ImagesPerSec, m.Images > 0),
			rateCell(m.AudioInSPerSec, m.AudioInS > 0), rateCell(m.BodyMBPerSec, m.BodyBytes > 0),
			rateCell(m.TokensPerImage, m.ImagesCounted > 0),
			textfmt.DistMS(m.Encode, m.Encode.P50), textfmt.DistMS(m.Encode, m.Encode.P99),
			textfmt.DistMS(m.Upload, m.Upload.P50), textfmt.DistMS(m.Upload, m.Upload.P99)})
	}
	return rows
}

// sentMedia reports whether m's requests sent media, rather than only
// asking a speech endpoint for audio.
func sentMedia(m *metrics.MediaSummary) bool {
	return m.Images > 0 || m.Audios > 0 || m.Videos > 0 || m.AudioInS > 0
}

// speechRows are the speech table's rows, label first: per stage that
// received audio, its real-time factor (audio seconds per wall second),
// bytes per second and the time to the first audio byte (the speech
// requests' TTFT).
func speechRows(stages []metrics.StageSummary, labels []string) [][]string {
	var rows [][]string
	for i, s := range stages {
		m := s.Media
		if m == nil || m.AudioOutS == 0 {
			continue
		}
		first := s.ByAPI[engine.EndpointSpeech].TTFT // a stage with speech requests has the breakdown
		rows = append(rows, []string{labels[i], fmt.Sprint(m.RTF.Count), rateCell(m.AudioOutSPerSec, true),
			valueCell(m.RTF, m.RTF.P50), valueCell(m.RTF, m.RTF.P90), valueCell(m.RTF, m.RTF.P99),
			valueCell(m.AudioBytesPerSec, m.AudioBytesPerSec.P50/1e3),
			textfmt.DistMS(first, first.P50), textfmt.DistMS(first, first.P99)})
	}
	return rows
}

// mediaTables are the HTML report's media and speech tables, with no
// rows for a run without.
func mediaTables(stages []metrics.StageSummary, labels []string) (media, speech htmlTable) {
	media, speech = htmlTable{Head: mediaHead}, htmlTable{Head: speechHead}
	for _, r := range mediaRows(stages, labels) {
		media.Rows = append(media.Rows, htmlRow(r))
	}
	for _, r := range speechRows(stages, labels) {
		speech.Rows = append(speech.Rows, htmlRow(r))
	}
	return media, speech
}

// htmlRow is a row of figures, its first cell a label.
func htmlRow(cells []string) []htmlCell {
	out := make([]htmlCell, len(cells))
	for i, c := range cells {
		out[i] = htmlCell{Text: c, Left: i == 0}
	}
	return out
}

// rateCell is a rate or ratio to three significant digits, "-" when
// nothing was counted.
func rateCell(v float64, counted bool) string {
	if !counted {
		return "-"
	}
	return figure(v)
}

// valueCell is a figure of a distribution of plain values, "-" when it
// has no samples.
func valueCell(d metrics.Dist, v float64) string {
	if d.Count == 0 {
		return "-"
	}
	return figure(v)
}

// figure is v with the precision its size needs, as the throughput
// table prints rates.
func figure(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
