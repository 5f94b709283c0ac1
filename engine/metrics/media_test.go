package metrics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// mediaSample is a successful chat request in stage "sweep"/stage that
// sent images (and audio, when audioS > 0).
func mediaSample(stage string, startS float64, images, tokens int, body int64, encode, upload time.Duration, audioS float64) engine.Sample {
	s := okSample(stage, startS, time.Second)
	s.API, s.Images, s.MediaTokens, s.BodyBytes, s.Encode, s.Upload = engine.EndpointChat, images, tokens, body, encode, upload
	if audioS > 0 {
		s.Audios, s.AudioIn = 1, audioS
	}
	return s
}

// speechSample is a successful speech request that got audioS seconds
// of audio in bytes, its answer taking e2e.
func speechSample(stage string, startS float64, audioS float64, bytes int64, e2e time.Duration) engine.Sample {
	s := okSample(stage, startS, e2e)
	s.API, s.AudioOut, s.AudioBytes, s.TTFT, s.TPOT, s.ITL = engine.EndpointSpeech, audioS, bytes, e2e/8, 0, nil
	s.BodyBytes = 120
	return s
}

// TestMediaFigures: a stage's media figures, by exact arithmetic over its
// 10 s window, count the successful media requests only; a text stage
// has none.
func TestMediaFigures(t *testing.T) {
	c := NewCollector()
	for i, stage := range []string{"text", "vision", "speech"} {
		c.StageStarted(mark("sweep", stage, i, 1, 0))
	}
	c.Sample(okSample("text", 1, time.Second))
	ms := time.Millisecond
	for _, s := range []engine.Sample{
		mediaSample("vision", 1, 2, 1000, 2_000_000, 3*ms, 10*ms, 0),
		mediaSample("vision", 2, 1, 0, 1_000_000, 1*ms, 5*ms, 0), // usage did not count its image
		mediaSample("vision", 3, 1, 600, 500_000, 2*ms, 6*ms, 2.5),
		okSample("vision", 4, time.Second), // text: in no media figure
		speechSample("speech", 1, 4, 192_000, 2*time.Second),
		speechSample("speech", 2, 1, 48_000, 2*time.Second),
	} {
		c.Sample(s)
	}
	failed := mediaSample("vision", 5, 3, 900, 9_000_000, ms, ms, 0)
	failed.Err = &engine.Error{Class: "http_4xx:400", Message: "bad image"}
	c.Sample(failed)
	for i, stage := range []string{"text", "vision", "speech"} {
		c.StageEnded(mark("sweep", stage, i, 1, 10))
	}
	sum := c.Close()
	if m := findStage(t, sum, "text").Media; m != nil {
		t.Errorf("text stage: media %+v, want none", m)
	}
	v := findStage(t, sum, "vision").Media
	sp := findStage(t, sum, "speech")
	if v == nil || sp.Media == nil {
		t.Fatalf("media: vision %v, speech %v; want both", v, sp.Media)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(v.Requests), 3},
		{"body bytes", float64(v.BodyBytes), 3_500_000},
		{"MB/s", v.BodyMBPerSec, 0.35},
		{"images", float64(v.Images), 4},
		{"images/s", v.ImagesPerSec, 0.4},
		{"audios", float64(v.Audios), 1},
		{"audio in s", v.AudioInS, 2.5},
		{"audio in s/s", v.AudioInSPerSec, 0.25},
		{"media tokens", float64(v.MediaTokens), 1600},
		{"image tokens", float64(v.ImageTokens), 1600},
		{"images counted", float64(v.ImagesCounted), 3},
		{"tokens/image", v.TokensPerImage, 1600.0 / 3},
		{"tokens/image count", float64(v.TokensPerImageDist.Count), 2},
		{"tokens/image min", v.TokensPerImageDist.Min, 500},
		{"tokens/image max", v.TokensPerImageDist.Max, 600},
		{"encode count", float64(v.Encode.Count), 3},
		{"encode min", v.Encode.Min, 1},
		{"encode max", v.Encode.Max, 3},
		{"upload p50", v.Upload.P50, 6},
		{"upload max", v.Upload.Max, 10},
		{"vision rtf count", float64(v.RTF.Count), 0},
		{"speech requests", float64(sp.Media.Requests), 2},
		{"speech audio out s", sp.Media.AudioOutS, 5},
		{"speech audio out s/s", sp.Media.AudioOutSPerSec, 0.5},
		{"speech audio bytes", float64(sp.Media.AudioBytes), 240_000},
		{"speech rtf min", sp.Media.RTF.Min, 0.5},
		{"speech rtf max", sp.Media.RTF.Max, 2},
		{"speech rtf mean", sp.Media.RTF.Mean, 1.25},
		{"speech bytes/s max", sp.Media.AudioBytesPerSec.Max, 96_000},
		{"speech bytes/s min", sp.Media.AudioBytesPerSec.Min, 24_000},
		{"speech images", float64(sp.Media.Images), 0},
		{"time to first audio p50", sp.ByAPI[engine.EndpointSpeech].TTFT.P50, 250},
	} {
		if !within(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestMediaTail: a media request started after its stage's window is
// counted but left out of the rates, as the stage's own requests are.
func TestMediaTail(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	c.Sample(mediaSample("c1", 1, 1, 0, 1_000_000, 0, 0, 1))
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	c.Sample(mediaSample("c1", 11, 3, 0, 4_000_000, 0, 0, 2))
	m := findStage(t, c.Close(), "c1").Media
	if m == nil {
		t.Fatal("no media figures")
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"images", float64(m.Images), 4},
		{"images/s", m.ImagesPerSec, 0.1},
		{"body bytes", float64(m.BodyBytes), 5_000_000},
		{"MB/s", m.BodyMBPerSec, 0.1},
		{"audio in s/s", m.AudioInSPerSec, 0.1},
		{"encode count", float64(m.Encode.Count), 0}, // not measured
	} {
		if !within(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestMediaTextUnchanged: a text-only run's summary and state name no
// media figure, so that its result file reads as it did before them.
func TestMediaTextUnchanged(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	s := okSample("c1", 1, time.Second)
	s.BodyBytes, s.Encode, s.Upload = 300, time.Millisecond, time.Millisecond // a client that times every body
	c.Sample(s)
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	sum := c.Close()
	b, err := json.Marshal(struct {
		S *Summary
		T *State
	}{sum, c.State()})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"media"`, `"encode"`, `"upload"`, `"body_bytes"`, `"media_requests"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("a text run's summary or state has %s", key)
		}
	}
}

// TestMediaQueries: the media metrics answer thresholds and tracked
// views, the value trends in their own units.
func TestMediaQueries(t *testing.T) {
	c := NewCollector()
	if err := c.Track("images", Filter{"prompt": "short"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Track("rtf", Filter{"prompt": "short"}); err != nil {
		t.Fatal(err)
	}
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	a := mediaSample("c1", 1, 2, 0, 10, 0, 20*time.Millisecond, 0)
	a.Tags = short
	c.Sample(a)
	c.Sample(mediaSample("c1", 2, 5, 0, 10, 0, 40*time.Millisecond, 0))
	sp := speechSample("c1", 3, 3, 10, 2*time.Second)
	sp.Tags = short
	c.Sample(sp)
	c.Sample(okSample("c1", 4, time.Second))
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	snap := c.Snapshot()
	c.Close()
	for _, tc := range []struct {
		q    Query
		want float64
		n    int64
	}{
		{Query{Metric: "images", Agg: AggCount}, 7, 2},
		{Query{Metric: "images", Agg: AggCount, Filter: Filter{"prompt": "short"}}, 2, 1},
		{Query{Metric: "upload", Agg: AggMax}, 40, 2},
		{Query{Metric: "rtf", Agg: AggMax}, 1.5, 1},
		{Query{Metric: "rtf", Agg: AggMax, Filter: Filter{"prompt": "short"}}, 1.5, 1},
		{Query{Metric: "media_requests", Agg: AggCount}, 3, 3},
	} {
		v, n, err := snap.Value(tc.q)
		if err != nil || v != tc.want || n != tc.n {
			t.Errorf("%s %v %v = %v (n %d, err %v), want %v (n %d)", tc.q.Metric, tc.q.Agg, tc.q.Filter, v, n, err, tc.want, tc.n)
		}
	}
}

// TestMergeMedia: the seeded run that proves merges exact (TestMergeExact
// compares its media figures) does send media and speech.
func TestMergeMedia(t *testing.T) {
	whole, _ := mergeRun(t, 42, 2)
	var images, speech int64
	for _, st := range whole.Close().Stages {
		if st.Media != nil {
			images += st.Media.Images
			speech += st.Media.RTF.Count
		}
	}
	if images == 0 || speech == 0 {
		t.Errorf("the seeded run sent %d images and %d speech requests; the merge test proves nothing of them", images, speech)
	}
}

// BenchmarkCollectorSampleMedia is BenchmarkCollectorSample for a
// request that sent images: its media figures cost one small allocation.
func BenchmarkCollectorSampleMedia(b *testing.B) {
	c := NewCollector()
	s := mediaSample("c1", 0, 2, 1500, 2_000_000, time.Millisecond, 20*time.Millisecond, 0)
	s.ITL = gaps(50)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.Sample(s)
	}
	c.Close()
}

// TestUploadFigure: the stage's upload figure takes the successful
// requests that sent media or a body of engine.LargeBody bytes or more,
// text or not; media_upload the media requests alone.
func TestUploadFigure(t *testing.T) {
	ms := time.Millisecond
	text := func(startS float64, body int64, upload time.Duration) engine.Sample {
		s := okSample("c1", startS, time.Second)
		s.BodyBytes, s.Upload = body, upload
		return s
	}
	failed := text(5, 1<<20, 90*ms)
	failed.Err = &engine.Error{Class: "timeout_ttft", Message: "no answer"}
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for _, s := range []engine.Sample{
		text(1, 300, 2*ms),                          // a small body: its write, in no figure
		text(2, engine.LargeBody-1, 3*ms),           // just under
		text(3, engine.LargeBody, 40*ms),            // a large text body
		text(4, 1<<20, 700*ms),                      // a long prompt on a slow link
		failed,                                      // failures enter no figure
		mediaSample("c1", 6, 1, 0, 900, 0, 5*ms, 0), // media, whatever its size
	} {
		c.Sample(s)
	}
	c.StageEnded(mark("sweep", "c1", 0, 1, 10))
	snap := c.Snapshot()
	sum := c.Close()
	u := findStage(t, sum, "c1").Upload
	if u.Count != 3 || u.Min != 5 || u.Max != 700 {
		t.Errorf("upload: count %d, min %v, max %v; want 3 requests from 5 to 700 ms", u.Count, u.Min, u.Max)
	}
	for _, tc := range []struct {
		metric string
		want   float64
		n      int64
	}{
		{"upload", 700, 3},
		{"media_upload", 5, 1},
	} {
		v, n, err := snap.Value(Query{Metric: tc.metric, Agg: AggMax})
		if err != nil || v != tc.want || n != tc.n {
			t.Errorf("%s max = %v (n %d, err %v), want %v (n %d)", tc.metric, v, n, err, tc.want, tc.n)
		}
	}
}
