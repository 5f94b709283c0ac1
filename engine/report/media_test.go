package report

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
)

// mediaRun is a run measured by a real collector: a vision scenario whose
// two stages send 1 and 2 images a request (the second with audio too,
// and text requests beside them), or, with speech, a voice scenario of
// speech and transcription requests.
func mediaRun(speech bool) *result.Result {
	c := metrics.NewCollector()
	scenario, stages := "vision", []string{"one-image", "two-images"}
	if speech {
		scenario, stages = "voice", []string{"speak", "transcribe"}
	}
	for i, st := range stages {
		c.StageStarted(engine.StageMark{Scenario: scenario, Stage: st, Index: i, Target: 4, At: t0.Add(time.Duration(i) * 20 * time.Second)})
	}
	for i, st := range stages {
		base := t0.Add(time.Duration(i) * 20 * time.Second)
		for j := range 40 {
			var s engine.Sample
			switch {
			case speech && i == 0:
				s = speechSampleAt(base, j)
			case speech:
				s = transcriptionAt(base, j)
			default:
				s = visionSampleAt(base, i+1, j)
			}
			s.Scenario, s.Stage = scenario, st
			c.Sample(s)
		}
	}
	for i, st := range stages {
		c.StageEnded(engine.StageMark{Scenario: scenario, Stage: st, Index: i, Target: 4, At: t0.Add(time.Duration(i)*20*time.Second + 20*time.Second)})
	}
	return result.New(result.Meta{Scenario: scenario + ".lua", Model: "m", Simulator: true, Seed: 7,
		Start: t0, End: t0.Add(time.Duration(len(stages)) * 20 * time.Second), Complete: true}, c.Close())
}

// visionSampleAt is the j-th request of a vision stage: images of ~600
// tokens each and 1.2 MB of body a piece; one in four is text only, and
// in the two-image stage one in two carries a second of audio.
func visionSampleAt(base time.Time, images, j int) engine.Sample {
	ms := time.Millisecond
	s := engine.Sample{Result: engine.Result{API: engine.EndpointChat, Start: base.Add(time.Duration(j) * 400 * ms), Status: 200,
		TTFB: 40 * ms, TTFT: time.Duration(80+10*j) * ms, TTFC: time.Duration(80+10*j) * ms, E2E: time.Duration(900+20*j) * ms,
		TPOT: 8 * ms, ITL: []time.Duration{8 * ms, 9 * ms}, InputTokens: 30, InputTokensSource: engine.TokensFromUsage,
		OutputTokens: 100, TokensSource: engine.TokensFromUsage, Streamed: true, BodyBytes: 400}}
	if j%4 == 3 {
		return s
	}
	s.Images, s.MediaTokens = images, images*(590+j%3*10)
	s.InputTokens += s.MediaTokens
	s.BodyBytes = int64(images) * 1_200_000
	s.Encode, s.Upload = time.Duration(500+10*j)*time.Microsecond, time.Duration(images*(12+j%5))*ms
	if images == 2 && j%2 == 0 {
		s.Audios, s.AudioIn = 1, 1
	}
	return s
}

// speechSampleAt is the j-th speech request: 2 to 4 s of 24 kHz 16-bit
// audio, its first byte after 120 ms and more.
func speechSampleAt(base time.Time, j int) engine.Sample {
	ms := time.Millisecond
	audio := 2 + float64(j%3)
	return engine.Sample{Result: engine.Result{API: engine.EndpointSpeech, Start: base.Add(time.Duration(j) * 400 * ms), Status: 200,
		TTFB: 100 * ms, TTFT: time.Duration(120+5*j) * ms, E2E: time.Duration(1000+25*j) * ms, Streamed: true,
		BodyBytes: 90, Upload: 200 * time.Microsecond, AudioOut: audio, AudioBytes: int64(audio * 48_000)}}
}

// transcriptionAt is the j-th transcription: 5 s of audio sent, its
// first text after 300 ms and more.
func transcriptionAt(base time.Time, j int) engine.Sample {
	ms := time.Millisecond
	return engine.Sample{Result: engine.Result{API: engine.EndpointTranscriptions, Start: base.Add(time.Duration(j) * 400 * ms), Status: 200,
		TTFB: 50 * ms, TTFT: time.Duration(300+4*j) * ms, TTFC: time.Duration(300+4*j) * ms, E2E: time.Duration(700+8*j) * ms,
		Streamed: true, InputTokens: 250, InputTokensSource: engine.TokensFromUsage, OutputTokens: 40, TokensSource: engine.TokensFromUsage,
		BodyBytes: 160_044, Encode: 30 * time.Microsecond, Upload: time.Duration(3+j%4) * ms, Audios: 1, AudioIn: 5, MediaTokens: 250}}
}

// TestMediaGolden: a vision run and a speech run, in every rendering.
func TestMediaGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		speech bool
	}{{"media", false}, {"speech", true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := mediaRun(tc.speech)
			golden(t, tc.name+".txt.golden", render(t, Text(r)))
			golden(t, tc.name+".json.golden", render(t, JSON(r)))
			golden(t, tc.name+".csv.golden", render(t, StagesCSV(r)))
			golden(t, tc.name+".html.golden", render(t, HTML(r)))
		})
	}
}

// TestMediaText: the media table's figures, by arithmetic over the
// fixture: 30 of 40 requests sent images over 20 s.
func TestMediaText(t *testing.T) {
	text := string(render(t, Text(mediaRun(false))))
	text = text[strings.Index(text, "\nmedia ("):]
	// one-image: 30 images in 20 s, 36 MB, (10×590+10×600+10×610)/30 tokens.
	if got, want := fieldsOf(text, "one-image"), "[one-image 30 1.50 - 1.80 600"; !strings.HasPrefix(got, want) {
		t.Errorf("media row = %s, want it to start %s]\n%s", got, want, text)
	}
	// two-images: 60 images, audio on the 20 even requests: 20 s of
	// audio in 20 s, 72 MB.
	if got, want := fieldsOf(text, "two-images"), "[two-images 30 3.00 1.00 3.60 600"; !strings.HasPrefix(got, want) {
		t.Errorf("media row = %s, want it to start %s]\n%s", got, want, text)
	}
	speech := string(render(t, Text(mediaRun(true))))
	for _, want := range []string{"speech (audio received)", "RTF p50", "first audio p50"} {
		if !strings.Contains(speech, want) {
			t.Errorf("speech report lacks %q:\n%s", want, speech)
		}
	}
}

// TestMediaJSONRoundTrip: the media figures survive the result file.
func TestMediaJSONRoundTrip(t *testing.T) {
	for _, speech := range []bool{false, true} {
		want := mediaRun(speech)
		got, err := result.ReadJSON(bytes.NewReader(render(t, JSON(want))))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("speech %v: round trip differs:\ngot  %+v\nwant %+v", speech, got.Stages[0].Media, want.Stages[0].Media)
		}
		if want.Stages[0].Media == nil {
			t.Errorf("speech %v: no media figures", speech)
		}
	}
}

// TestMediaHTMLInChromium: the speech run's page, as a browser renders
// it, shows the media and speech tables with their figures.
func TestMediaHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium not installed: apt-get install chromium")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "speech.html")
	if err := os.WriteFile(page, render(t, HTML(mediaRun(true))), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, dir, "--dump-dom", "file://"+page)
	for _, want := range []string{"<h2>Media</h2>", "<h2>Speech</h2>", "<th>RTF p50</th>", "<th>first audio p50</th>",
		"<td>5.95</td>", "<td>10.0</td>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
}
