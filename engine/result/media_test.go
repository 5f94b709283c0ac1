package result

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
)

// mediaSummary is a collector's summary of one stage of image and speech
// requests, so that its media figures are the collector's own.
func mediaSummary(withMedia bool) *metrics.Summary {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := metrics.NewCollector()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: t0})
	for i := range 4 {
		r := engine.Result{Start: t0.Add(time.Duration(i) * time.Second), Status: 200, API: engine.EndpointChat,
			TTFT: 100 * time.Millisecond, E2E: time.Second, OutputTokens: 5, TokensSource: engine.TokensFromUsage}
		if withMedia {
			r.Images, r.MediaTokens, r.BodyBytes = 1+i%2, 700, 1_500_000
			r.Encode, r.Upload = time.Millisecond, time.Duration(10+i)*time.Millisecond
			if i == 3 {
				r = engine.Result{Start: r.Start, Status: 200, API: engine.EndpointSpeech, TTFT: 90 * time.Millisecond,
					E2E: 2 * time.Second, AudioOut: 3, AudioBytes: 144_000}
			}
		}
		c.Sample(engine.Sample{Scenario: "s", Stage: "c1", Result: r})
	}
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: t0.Add(10 * time.Second)})
	return c.Close()
}

// TestMediaRoundTrip: a result's media figures read back as written; a
// text run's file has no media key at all, so files before the figures
// and after them read alike. The schema version stays: the figures are
// new fields, none changed meaning.
func TestMediaRoundTrip(t *testing.T) {
	for _, withMedia := range []bool{true, false} {
		want := New(Meta{Scenario: "s.lua", Complete: true}, mediaSummary(withMedia))
		var b bytes.Buffer
		if err := WriteJSON(&b, want); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), `"media"`); got != withMedia {
			t.Errorf("media %v: the file has a media key: %v", withMedia, got)
		}
		got, err := ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("media %v: round trip differs:\ngot  %+v\nwant %+v", withMedia, got.Stages[0].Media, want.Stages[0].Media)
		}
		m := got.Stages[0].Media
		if !withMedia {
			continue
		}
		if m == nil {
			t.Fatal("no media figures read back")
		}
		if m.Images != 4 || m.ImagesCounted != 4 || m.TokensPerImage != 2100.0/4 || m.RTF.Max != 1.5 || m.AudioBytesPerSec.Max != 72_000 {
			t.Errorf("media read back: images %d, counted %d, tokens/image %v, rtf max %v, bytes/s max %v; want 4, 4, 525, 1.5, 72000",
				m.Images, m.ImagesCounted, m.TokensPerImage, m.RTF.Max, m.AudioBytesPerSec.Max)
		}
	}
}
