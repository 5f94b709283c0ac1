package metrics

import (
	"time"

	"github.com/llmload/llmload/engine"
)

// MediaSummary is what a stage's media requests carried and cost: the
// successful requests that sent images, audio or video, or went to a
// speech endpoint (transcriptions, speech). Text requests enter none of
// it, so a text-only stage has no MediaSummary at all, and a stage that
// mixes both counts only its media requests here. Rates divide what
// started in the window by the window, as the stage's own do; MB are 10⁶
// bytes.
type MediaSummary struct {
	Requests int64 `json:"requests"`
	// BodyBytes are the media requests' bodies, and BodyMBPerSec their
	// rate: what the client put on the wire.
	BodyBytes    int64   `json:"body_bytes"`
	BodyMBPerSec float64 `json:"body_mb_per_sec"`
	Images       int64   `json:"images,omitempty"`
	ImagesPerSec float64 `json:"images_per_sec,omitempty"`
	Audios       int64   `json:"audios,omitempty"`
	Videos       int64   `json:"videos,omitempty"`
	// AudioInS are the seconds of audio sent (parts and transcriptions'
	// files), AudioInSPerSec their rate: audio seconds per second.
	AudioInS       float64 `json:"audio_in_s,omitempty"`
	AudioInSPerSec float64 `json:"audio_in_s_per_sec,omitempty"`
	// MediaTokens are the prompt tokens of the media parts, as the
	// server's usage counted them (engine.Result.MediaTokens).
	MediaTokens int64 `json:"media_tokens,omitempty"`
	// TokensPerImage is ImageTokens / ImagesCounted: the media tokens of
	// the requests that sent images and whose usage counted media tokens,
	// per image they sent; TokensPerImageDist is each such request's own
	// ratio.
	ImageTokens        int64   `json:"image_tokens,omitempty"`
	ImagesCounted      int64   `json:"images_counted,omitempty"`
	TokensPerImage     float64 `json:"tokens_per_image,omitempty"`
	TokensPerImageDist Dist    `json:"tokens_per_image_dist,omitzero"`
	// Encode is the client's time to build a body (outside every
	// latency); Upload from t0 to the body's last byte (inside TTFT).
	Encode Dist `json:"encode,omitzero"`
	Upload Dist `json:"upload,omitzero"`
	// Speech: the seconds and bytes of audio received, per request the
	// real-time factor (audio seconds ÷ E2E seconds) and bytes per
	// second of E2E. The time to first audio is the speech endpoint's
	// TTFT, in StageSummary.ByAPI.
	AudioOutS        float64 `json:"audio_out_s,omitempty"`
	AudioOutSPerSec  float64 `json:"audio_out_s_per_sec,omitempty"`
	AudioBytes       int64   `json:"audio_bytes,omitempty"`
	RTF              Dist    `json:"rtf,omitzero"`
	AudioBytesPerSec Dist    `json:"audio_bytes_per_s,omitzero"`
}

// mediaEvent is a media sample's media figures. Only media samples carry
// one, so a text sample's event grows by a nil pointer and nothing else.
type mediaEvent struct {
	encode, upload         time.Duration
	bodyBytes, audioBytes  int64
	images, audios, videos int
	mediaTokens            int
	audioIn, audioOut      float64
}

// mediaOf is a successful media request's figures; nil for a text
// request or a failure (failures enter no figure but the counts).
func mediaOf(r *engine.Result) *mediaEvent {
	if r.Err != nil || !isMedia(r) {
		return nil
	}
	return &mediaEvent{
		encode: r.Encode, upload: r.Upload, bodyBytes: r.BodyBytes, audioBytes: r.AudioBytes,
		images: r.Images, audios: r.Audios, videos: r.Videos, mediaTokens: r.MediaTokens,
		audioIn: r.AudioIn, audioOut: r.AudioOut,
	}
}

// isMedia reports whether r sent media or went to a speech endpoint.
func isMedia(r *engine.Result) bool {
	return sentMedia(r) || r.AudioOut > 0 || r.AudioBytes > 0 ||
		r.API == engine.EndpointSpeech || r.API == engine.EndpointTranscriptions
}

// sentMedia reports whether r sent media parts or audio (a speech request
// only asks for audio).
func sentMedia(r *engine.Result) bool {
	return r.Images > 0 || r.Audios > 0 || r.Videos > 0 || r.AudioIn > 0
}

// mediaMetrics are the built-ins a media sample feeds besides
// sampleMetrics.
var mediaMetrics = [...]metricID{
	mMediaRequests, mEncode, mMediaUpload, mBodyBytes, mImages, mAudios, mVideos, mAudioIn, mMediaTokens,
	mImageTokens, mImagesCounted, mTokensPerImage, mAudioOut, mAudioBytes, mRTF, mAudioBytesPerSec,
}

// feedMedia adds a successful request's media figure to the cell of
// built-in metric id; a text request (no media) adds nothing. Zero
// counts are skipped so that a cell's count is of requests that had the
// figure.
func feedMedia(id metricID, c *cell, e *event) {
	m := e.media
	if m == nil {
		return
	}
	switch id {
	case mMediaRequests:
		c.add(1)
	case mEncode:
		c.addSet(m.encode)
	case mMediaUpload:
		c.addSet(m.upload)
	case mBodyBytes:
		addNonZero(c, float64(m.bodyBytes))
	case mImages:
		addNonZero(c, float64(m.images))
	case mAudios:
		addNonZero(c, float64(m.audios))
	case mVideos:
		addNonZero(c, float64(m.videos))
	case mAudioIn:
		addNonZero(c, m.audioIn)
	case mMediaTokens:
		addNonZero(c, float64(m.mediaTokens))
	case mAudioOut:
		addNonZero(c, m.audioOut)
	case mAudioBytes:
		addNonZero(c, float64(m.audioBytes))
	default:
		feedMediaRatio(id, c, e)
	}
}

// feedMediaRatio adds the per-request ratios: tokens per image, and a
// speech answer's audio seconds and bytes per second of E2E.
func feedMediaRatio(id metricID, c *cell, e *event) {
	m := e.media
	counted := m.images > 0 && m.mediaTokens > 0
	secs := e.e2e.Seconds()
	switch id {
	case mImageTokens:
		if counted {
			c.add(float64(m.mediaTokens))
		}
	case mImagesCounted:
		if counted {
			c.add(float64(m.images))
		}
	case mTokensPerImage:
		if counted {
			c.add(float64(m.mediaTokens) / float64(m.images))
		}
	case mRTF:
		if m.audioOut > 0 && secs > 0 {
			c.add(m.audioOut / secs)
		}
	case mAudioBytesPerSec:
		if m.audioBytes > 0 && secs > 0 {
			c.add(float64(m.audioBytes) / secs)
		}
	}
}

func addNonZero(c *cell, v float64) {
	if v != 0 {
		c.add(v)
	}
}

// isMediaMetric reports whether id is one of mediaMetrics.
func isMediaMetric(id metricID) bool { return id >= mMediaRequests && id <= mAudioBytesPerSec }

// mediaFigures fills st.Media from the stage's media cells; it stays nil
// when the stage had no successful media request.
func mediaFigures(st *StageSummary, ss *stageSnap) {
	c, secs := &ss.cells, ss.seconds()
	if c[mMediaRequests].n == 0 {
		return
	}
	rate := func(id metricID) float64 { return perSecond(c[id].sum-c[id].tail, secs) }
	tokens, images := &c[mImageTokens], &c[mImagesCounted]
	st.Media = &MediaSummary{
		Requests:  int64(c[mMediaRequests].sum),
		BodyBytes: int64(c[mBodyBytes].sum), BodyMBPerSec: rate(mBodyBytes) / 1e6,
		Images: int64(c[mImages].sum), ImagesPerSec: rate(mImages),
		Audios: int64(c[mAudios].sum), Videos: int64(c[mVideos].sum),
		AudioInS: c[mAudioIn].sum, AudioInSPerSec: rate(mAudioIn),
		MediaTokens: int64(c[mMediaTokens].sum),
		ImageTokens: int64(tokens.sum), ImagesCounted: int64(images.sum),
		TokensPerImageDist: c[mTokensPerImage].t.dist(),
		Encode:             c[mEncode].t.dist(), Upload: c[mMediaUpload].t.dist(),
		AudioOutS: c[mAudioOut].sum, AudioOutSPerSec: rate(mAudioOut),
		AudioBytes:       int64(c[mAudioBytes].sum),
		RTF:              c[mRTF].t.dist(),
		AudioBytesPerSec: c[mAudioBytesPerSec].t.dist(),
	}
	if images.sum > 0 {
		st.Media.TokensPerImage = tokens.sum / images.sum
	}
}
