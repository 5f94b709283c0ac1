package api

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// partRules say which content parts an API takes: apiName names it in
// errors. A nil *partRules takes none (content is a string).
type partRules struct {
	apiName string
	types   []string
	refuse  map[string]string // type → why this API refuses it
}

// The content parts of each API that takes them.
var (
	chatParts = &partRules{apiName: "llm.chat", types: partTypes}
	// Responses input items have input_text, input_image and input_audio.
	respondParts = &partRules{apiName: "llm.respond", types: partTypes,
		refuse: map[string]string{engine.PartVideo: "the Responses API has no video input"}}
	// Anthropic's Messages API has text and image blocks only.
	messagesParts = &partRules{apiName: "llm.messages", types: partTypes,
		refuse: map[string]string{
			engine.PartAudio: "Anthropic's Messages API has no audio input (send audio with llm.chat or llm.transcribe)",
			engine.PartVideo: "Anthropic's Messages API has no video input (send video with llm.chat)",
		}}
)

// partTypes are the known types of a content part.
var partTypes = []string{engine.PartText, engine.PartImage, engine.PartAudio, engine.PartVideo}

// The keys of each part type.
var partKeys = map[string][]string{
	engine.PartText:  {"type", "text"},
	engine.PartImage: {"type", "path", "data", "url", "synthetic", "pool", "image", "detail", "count", "max_bytes"},
	engine.PartAudio: {"type", "path", "data", "synthetic", "pool", "audio", "format", "count", "max_bytes"},
	engine.PartVideo: {"type", "path", "url", "max_bytes"},
}

// sourceKeys are the keys naming a media part's source, of which a part
// has exactly one.
var sourceKeys = []string{"path", "data", "url", "synthetic", "pool", "image", "audio"}

// details are the values of an image part's detail.
var details = []string{"low", "high", "auto"}

// audioFormats are the formats an audio part may be sent in.
var audioFormats = []string{"wav", "mp3"}

// maxCount bounds a part's count: more images than any server takes.
const maxCount = 1024

// partSource is where a media part's items come from: one fixed item (a
// file or data), a URL, synthetic items or a pool.
type partSource struct {
	item  *media.Item
	url   string
	synth *synthSource
	pool  *mediaPool
}

// content reads a message's content: a string as it is, or a list of
// parts (or a dataset item, pool:next() of a media dataset) into parts.
func (d *ArgDecoder) content(path string, v lua.LValue, msg *engine.Message) {
	switch c := luaval.Plain(v).(type) {
	case lua.LString:
		msg.Content = string(c)
		return
	case *lua.LUserData:
		if cv, ok := c.Value.(*contentValue); ok && d.rules != nil {
			msg.Parts = cv.parts
			return
		}
	case *lua.LTable:
		if d.rules != nil {
			msg.Parts = d.parts(path, c)
			return
		}
		d.Errorf(path, "expected string, got table (content parts are taken by llm.chat, llm.respond and llm.messages)")
		return
	}
	d.Errorf(path, "expected string or a list of content parts, got %s", v.Type())
}

// parts reads a list of content parts.
func (d *ArgDecoder) parts(path string, v lua.LValue) []engine.Part {
	items := d.List(path, v)
	if items != nil && len(items) == 0 {
		d.Errorf(path, "needs at least one part")
	}
	out := make([]engine.Part, 0, len(items))
	for i, item := range items {
		p := path + "[" + strconv.Itoa(i+1) + "]"
		if ud, ok := item.(*lua.LUserData); ok {
			if cv, ok := ud.Value.(*contentValue); ok {
				out = append(out, cv.parts...)
				continue
			}
		}
		out = d.part(p, item, out)
	}
	return out
}

// part reads one part and appends it, count times for a media part.
func (d *ArgDecoder) part(path string, v lua.LValue, out []engine.Part) []engine.Part {
	tbl, ok := luaval.Plain(v).(*lua.LTable)
	if !ok {
		d.Errorf(path, "expected a part table ({ type = \"text\", text = ... }), got %s", v.Type())
		return out
	}
	typ, ok := tbl.RawGetString("type").(lua.LString)
	if !ok {
		if t := tbl.RawGetString("type"); t != lua.LNil {
			d.Errorf(luaval.Child(path, "type"), "expected string, got %s", t.Type())
		} else {
			d.Errorf(luaval.Child(path, "type"), "required (%s)", strings.Join(partTypes, ", "))
		}
		return out
	}
	keys, known := partKeys[string(typ)]
	if !known {
		msg := fmt.Sprintf("unknown part type %q (known: %s)", string(typ), strings.Join(partTypes, ", "))
		if best, ok := luaval.Nearest(string(typ), partTypes); ok {
			msg += fmt.Sprintf("; did you mean %s?", best)
		}
		d.Errorf(luaval.Child(path, "type"), "%s", msg)
		return out
	}
	if why := d.rules.refuse[string(typ)]; why != "" {
		d.Errorf(luaval.Child(path, "type"), "%s: %s %s part: %s", d.rules.apiName, article(string(typ)), string(typ), why)
		return out
	}
	f := d.partRecord(path, tbl, keys)
	if f == nil {
		return out
	}
	if typ == engine.PartText {
		if f["text"] == nil {
			d.Errorf(luaval.Child(path, "text"), "required")
			return out
		}
		return append(out, engine.Part{Type: engine.PartText, Text: d.Str(luaval.Child(path, "text"), f["text"])})
	}
	base := engine.Part{Type: string(typ)}
	if v := f["detail"]; v != nil {
		base.Detail = d.Str(luaval.Child(path, "detail"), v)
		if base.Detail != "" && !luaval.Contains(details, base.Detail) {
			d.Errorf(luaval.Child(path, "detail"), "%q is not a detail (%s)", base.Detail, strings.Join(details, ", "))
		}
	}
	count := 1
	if v := f["count"]; v != nil {
		count = d.Count(luaval.Child(path, "count"), v, 1)
		if count > maxCount {
			d.Errorf(luaval.Child(path, "count"), "%d is more than %d items in one part", count, maxCount)
			return out
		}
	}
	src, ok := d.source(path, string(typ), f)
	if !ok {
		return out
	}
	if src.pool != nil && src.pool.records != nil {
		d.Errorf(luaval.Child(path, "pool"), "a dataset pool gives whole contents (prompt and images): use content = pool:next()")
		return out
	}
	return d.appendItems(path, src, count, base, out)
}

// source reads the one source of a media part of kind from its fields.
func (d *ArgDecoder) source(path, kind string, f map[string]lua.LValue) (partSource, bool) {
	key, many := "", false
	for _, k := range sourceKeys {
		if f[k] != nil {
			many = many || key != ""
			if key == "" {
				key = k
			}
		}
	}
	if key == "" || many {
		d.sourceError(path, kind, f)
		return partSource{}, false
	}
	p := luaval.Child(path, key)
	maxBytes := 0
	if v := f["max_bytes"]; v != nil {
		maxBytes = d.Count(luaval.Child(path, "max_bytes"), v, 1)
	}
	var src partSource
	switch v := f[key]; key {
	case "url":
		src.url = d.Str(p, v)
		if src.url != "" && !strings.HasPrefix(src.url, "http://") && !strings.HasPrefix(src.url, "https://") &&
			!strings.HasPrefix(src.url, "data:") {
			d.Errorf(p, "%q is not an http(s) or data URL", src.url)
			return src, false
		}
	case "path":
		name := d.Str(p, v)
		it, err := d.m.loadFile(name, maxBytes)
		if err != nil {
			d.Errorf(p, "%v", err)
			return src, false
		}
		src.item = it
	case "data":
		s, ok := v.(lua.LString)
		if !ok {
			d.Errorf(p, "expected a string of the file's bytes, got %s", v.Type())
			return src, false
		}
		it, err := d.m.dataItem(string(s), maxBytes)
		if err != nil {
			d.Errorf(p, "%v", err)
			return src, false
		}
		src.item = it
	case "synthetic":
		s, ok := d.m.inlineSynthetic(&d.Decoder, p, kind, v)
		if !ok {
			return src, false
		}
		src.synth = s
	default: // pool, image, audio: a value made by llm.images/audio/synthetic or pool:next()
		var ok bool
		if src, ok = d.sourceValue(p, kind, v); !ok {
			return src, false
		}
	}
	if src.item != nil && src.item.Kind != kind {
		d.Errorf(p, "%s: a %s file, not %s", src.item.Name, src.item.Format, kind)
		return src, false
	}
	if kind == engine.PartAudio {
		return src, d.audioFormat(path, f["format"], src)
	}
	return src, true
}

// sourceError reports a part with no source, or more than one.
func (d *ArgDecoder) sourceError(path, kind string, f map[string]lua.LValue) {
	var named, valid []string
	for _, k := range sourceKeys {
		if f[k] != nil {
			named = append(named, k)
		}
	}
	for _, k := range partKeys[kind] {
		if luaval.Contains(sourceKeys, k) {
			valid = append(valid, k)
		}
	}
	if len(named) == 0 {
		d.Errorf(path, "%s %s part needs one source: %s", article(kind), kind, strings.Join(valid, ", "))
		return
	}
	d.Errorf(luaval.Child(path, named[1]), "a part has one source, and this one names %s", strings.Join(named, " and "))
}

// partRecord is Record for a content part, into the VU's one scratch map:
// a request reads its parts one at a time and keeps none of their
// fields, so the map need not be made anew for each.
func (d *ArgDecoder) partRecord(path string, tbl *lua.LTable, keys []string) map[string]lua.LValue {
	if d.m == nil {
		return d.Record(path, tbl, keys)
	}
	f := d.m.partFields
	if f == nil {
		f = make(map[string]lua.LValue, 8)
		d.m.partFields = f
	}
	clear(f)
	for k, v := tbl.Next(lua.LNil); k != lua.LNil; k, v = tbl.Next(k) {
		s, ok := k.(lua.LString)
		if !ok || !luaval.Contains(keys, string(s)) {
			return d.Record(path, tbl, keys) // names the unknown keys
		}
		f[string(s)] = v
	}
	return f
}

// audioFormat checks an audio part's format against its source's own.
func (d *ArgDecoder) audioFormat(path string, v lua.LValue, src partSource) bool {
	if v == nil {
		return true
	}
	p := luaval.Child(path, "format")
	format := d.Str(p, v)
	if !luaval.Contains(audioFormats, format) {
		d.Errorf(p, "%q is not an audio format a chat request takes (%s)", format, strings.Join(audioFormats, ", "))
		return false
	}
	var actual, name string
	switch {
	case src.item != nil:
		actual, name = src.item.Format, src.item.Name
	case src.synth != nil:
		actual, name = src.synth.audio.Format, "the synthetic audio"
		if actual == "" {
			actual = "wav"
		}
	case src.pool != nil && src.pool.records == nil:
		actual, name = src.pool.format(), "the pool"
		if actual == "" {
			d.Errorf(p, "format = %q, but the pool mixes formats: give no format, or a pool of one", format)
			return false
		}
	}
	if actual != "" && actual != format {
		d.Errorf(p, "format = %q, but %s is %s", format, name, actual)
		return false
	}
	return true
}

// sourceValue reads a source made by the API: a media item, synthetic
// images or audio, or a pool, which must be of kind.
func (d *ArgDecoder) sourceValue(path, kind string, v lua.LValue) (partSource, bool) {
	var src partSource
	ud, ok := v.(*lua.LUserData)
	if ok {
		switch x := ud.Value.(type) {
		case *mediaValue:
			src.item = x.item
		case *synthSource:
			if x.kind != kind {
				d.Errorf(path, "synthetic %s, not %s", x.kind, kind)
				return src, false
			}
			src.synth = x
		case *mediaPool:
			if x.kind != kind {
				d.Errorf(path, "a pool of %s, not %s", x.kind, kind)
				return src, false
			}
			src.pool = x
		default:
			ok = false
		}
	}
	if !ok {
		d.Errorf(path, "expected a %s made by llm.synthetic.%s, llm.%s or pool:next(), got %s", kind, kind, poolFunc(kind), v.Type())
		return src, false
	}
	return src, true
}

// poolFunc is the function making pools of kind.
func poolFunc(kind string) string {
	if kind == media.Image {
		return "images"
	}
	return kind
}

// appendItems appends count parts of src to out. Synthetic parts take
// distinct variants, drawn from the VU's seeded source; pool parts the
// pool's next items.
func (d *ArgDecoder) appendItems(path string, src partSource, count int, base engine.Part, out []engine.Part) []engine.Part {
	start := 0
	if src.synth != nil {
		start = d.m.rng.IntN(src.synth.variants)
	}
	for k := range count {
		p := base
		switch {
		case src.url != "":
			p.URL = src.url
		case src.item != nil:
			p.Media = src.item
		case src.synth != nil:
			it, err := src.synth.item(d.m, (start+k)%src.synth.variants)
			if err != nil {
				d.Errorf(luaval.Child(path, "synthetic"), "%v", err)
				return out
			}
			p.Media = it
		case src.pool != nil:
			p.Media = src.pool.draw()
		}
		out = append(out, p)
	}
	return out
}

// fileKey is a media file as a script names it, with its bound.
type fileKey struct {
	name     string
	maxBytes int
}

// maxDataCache bounds the items made from data strings a VU remembers: a
// script that makes new bytes for every request gets no cache, not an
// unbounded one.
const maxDataCache = 64

// loadFile returns the media file name (relative to the script's
// directory) through the VU's cache, so a request naming a file costs a
// map lookup; media.Load reads it once per process.
func (m *Module) loadFile(name string, maxBytes int) (*media.Item, error) {
	if name == "" {
		return nil, fmt.Errorf("empty path")
	}
	k := fileKey{name, maxBytes}
	if it := m.mediaFiles[k]; it != nil {
		return it, nil
	}
	m.NoteFile(name)
	it, err := media.Load(ResolveData(m.scriptDir(), name), maxBytes)
	if err != nil {
		return nil, err
	}
	if m.mediaFiles == nil {
		m.mediaFiles = map[fileKey]*media.Item{}
	}
	m.mediaFiles[k] = it
	return it, nil
}

// dataItem returns the item of a data string's bytes, checked once per
// distinct string.
func (m *Module) dataItem(data string, maxBytes int) (*media.Item, error) {
	k := fileKey{data, maxBytes}
	if it := m.mediaData[k]; it != nil {
		return it, nil
	}
	if maxBytes == 0 {
		maxBytes = media.DefaultMaxBytes
	}
	it, err := media.New(fmt.Sprintf("data (%s)", media.Bytes(int64(len(data)))), []byte(data), maxBytes)
	if err != nil {
		return nil, err
	}
	if m.mediaData == nil {
		m.mediaData = map[fileKey]*media.Item{}
	}
	if len(m.mediaData) < maxDataCache {
		m.mediaData[k] = it
	}
	return it, nil
}

// scriptDir is the directory relative paths of a script are read from.
func (m *Module) scriptDir() string {
	if m.prog == nil || m.prog.Path == "" {
		return ""
	}
	return dirOf(m.prog.Path)
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
