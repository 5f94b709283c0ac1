package api

import (
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

var (
	transcribeKeys = []string{"audio", "model", "language", "prompt", "temperature", "stream", "extra", "tags", "target",
		"dirty", "headers"}
	audioSourceKeys = []string{"path", "data", "synthetic", "pool", "audio", "format", "max_bytes"}
	speakKeys       = []string{"input", "voice", "format", "model", "extra", "tags", "target", "dirty", "headers"}
	// speechFormats are the response formats of OpenAI's speech API.
	speechFormats = []string{"wav", "mp3", "opus", "aac", "flac", "pcm"}
)

// DefaultVoice is the voice llm.speak asks for unless told another.
const DefaultVoice = "alloy"

// transcribe implements llm.transcribe{ audio = source, model=?,
// language=?, prompt=?, temperature=?, stream = true, extra=?, tags=?,
// target=?, dirty=?, headers=? } -> result: one request to POST
// {base}/audio/transcriptions (multipart), streamed (the transcript's
// deltas; TTFT is the first text) unless stream = false. audio is a path,
// a source made by llm.synthetic.audio, llm.audio or pool:next(), or a
// table with one of an audio part's sources (path, data, synthetic, pool,
// audio) and its format and max_bytes. The result's text is the
// transcript.
func (m *Module) transcribe(L *lua.LState) int {
	return m.sendRequest(L, "llm.transcribe", L.CheckTable(1), m.transcribeRequest, nil)
}

// speak implements llm.speak{ input = "text", voice = "alloy", format =
// "wav", model=?, extra=?, tags=?, target=?, dirty=?, headers=? } ->
// result: one request to POST {base}/audio/speech; TTFB is the first
// audio byte, and the result has audio_seconds and audio_bytes.
func (m *Module) speak(L *lua.LState) int {
	return m.sendRequest(L, "llm.speak", L.CheckTable(1), m.speakRequest, nil)
}

// transcribeRequest validates a llm.transcribe table.
func (m *Module) transcribeRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.transcribe"
	d := &ArgDecoder{m: m}
	f := d.Record(path, tbl, transcribeKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointTranscriptions, Model: m.cfg.Model}
	if v := f["audio"]; v != nil {
		req.Audio = d.audioSource(luaval.Child(path, "audio"), v)
	} else if f != nil {
		d.Errorf(luaval.Child(path, "audio"), "required (a path, llm.synthetic.audio{...}, an llm.audio pool or { path = ... })")
	}
	for _, k := range []struct {
		key string
		dst *string
	}{{"language", &req.Language}, {"prompt", &req.Prompt}} {
		if v := f[k.key]; v != nil {
			*k.dst = d.Str(luaval.Child(path, k.key), v)
		}
	}
	req.Temperature = d.optNumber(luaval.Child(path, "temperature"), f["temperature"])
	if v := f["stream"]; v != nil {
		req.NoStream = !d.Boolean(luaval.Child(path, "stream"), v)
	}
	kind := d.speechCommon(path, f, req)
	return req, kind, d.Joined()
}

// audioSource reads llm.transcribe's audio: one item, drawn now.
func (d *ArgDecoder) audioSource(path string, v lua.LValue) *media.Item {
	var src partSource
	var ok bool
	switch x := luaval.Plain(v).(type) {
	case lua.LString:
		src, ok = d.source(path, media.Audio, map[string]lua.LValue{"path": x})
		path = luaval.Child(path, "path")
	case *lua.LTable:
		f := d.Record(path, x, audioSourceKeys)
		if f == nil {
			return nil
		}
		src, ok = d.source(path, media.Audio, f)
	default:
		src, ok = d.sourceValue(path, media.Audio, v)
	}
	if !ok {
		return nil
	}
	parts := d.appendItems(path, src, 1, engine.Part{Type: engine.PartAudio}, nil)
	if len(parts) == 0 {
		return nil
	}
	return parts[0].Media
}

// speakRequest validates a llm.speak table.
func (m *Module) speakRequest(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
	const path = "llm.speak"
	d := &ArgDecoder{m: m}
	f := d.Record(path, tbl, speakKeys)
	req := &engine.ChatRequest{Endpoint: engine.EndpointSpeech, Model: m.cfg.Model, Voice: DefaultVoice, AudioFormat: "wav"}
	if v := f["input"]; v != nil {
		req.Prompt = d.Str(luaval.Child(path, "input"), v)
		if req.Prompt == "" {
			d.Errorf(luaval.Child(path, "input"), "empty: there is nothing to speak")
		}
	} else if f != nil {
		d.Errorf(luaval.Child(path, "input"), "required (the text to speak)")
	}
	if v := f["voice"]; v != nil {
		req.Voice = d.Str(luaval.Child(path, "voice"), v)
	}
	if v := f["format"]; v != nil {
		req.AudioFormat = d.Str(luaval.Child(path, "format"), v)
		if !luaval.Contains(speechFormats, req.AudioFormat) {
			d.Errorf(luaval.Child(path, "format"), "%q is not a speech format (%s)", req.AudioFormat, strings.Join(speechFormats, ", "))
		}
	}
	kind := d.speechCommon(path, f, req)
	return req, kind, d.Joined()
}

// speechCommon reads the fields llm.transcribe and llm.speak share with
// the other requests, and returns the dirty kind forced.
func (d *ArgDecoder) speechCommon(path string, f map[string]lua.LValue, req *engine.ChatRequest) string {
	if v := f["model"]; v != nil {
		if s := d.Str(luaval.Child(path, "model"), v); s != "" {
			req.Model = s
		}
	}
	if v := f["extra"]; v != nil {
		req.Extra = d.JsonObject(luaval.Child(path, "extra"), v)
	}
	if v := f["tags"]; v != nil {
		req.Tags = d.StringMap(luaval.Child(path, "tags"), v)
	}
	d.target(path, f, req)
	d.requestHeaders(path, f, req)
	return d.forcedDirty(luaval.Child(path, "dirty"), f["dirty"])
}
