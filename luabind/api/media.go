package api

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

func dirOf(path string) string { return filepath.Dir(path) }

// mediaValue is one media item as a script holds it: pool:next() of an
// image or audio pool. Its bytes are shared by every VU.
type mediaValue struct{ item *media.Item }

// contentValue is a message content as a script holds it: pool:next() of
// a media dataset, its prompt text and images in order, shared by every
// VU and sent without a copy.
type contentValue struct {
	parts []engine.Part
}

// synthSource is a VU's synthetic images or audio, made by
// llm.synthetic.image/audio or a part's synthetic = {...}: variants
// distinct items per size, from the run seed, so every VU sends the same
// few items and memory grows with them, not with VUs or requests.
type synthSource struct {
	kind     string
	img      media.ImageSpec // Width and Height unset when sizes are drawn
	sizes    [][2]int        // the {w, h} of a size choice; one entry when fixed
	choice   *dataset.Choice // nil when the size is fixed
	audio    media.AudioSpec
	variants int
	seed     uint64
	items    []*media.Item // by size index * variants + variant, filled on first use
}

// DefaultVariants is how many distinct synthetic items of one spec a
// run sends unless told otherwise; maxVariants bounds it.
const (
	DefaultVariants = 16
	maxVariants     = 1024
)

// item returns variant of the source, drawing its size when it has a
// choice of them; made once per process (media memoises it) and then
// looked up in the VU's slice.
func (s *synthSource) item(m *Module, variant int) (*media.Item, error) {
	si := 0
	if s.choice != nil {
		si = s.choice.Pick(m.rng)
	}
	return s.at(si, variant)
}

// at returns the item of size index si and variant, made on first use.
func (s *synthSource) at(si, variant int) (*media.Item, error) {
	i := si*s.variants + variant
	if it := s.items[i]; it != nil {
		return it, nil
	}
	var it *media.Item
	var err error
	if s.kind == media.Image {
		spec := s.img
		spec.Width, spec.Height = s.sizes[si][0], s.sizes[si][1]
		it, err = media.SyntheticImage(spec, s.seed, variant)
	} else {
		it, err = media.SyntheticAudio(s.audio, s.seed, variant)
	}
	if err != nil {
		return nil, err
	}
	s.items[i] = it
	return it, nil
}

// prewarm makes every item of the source now, before the load: making a
// 1024×1024 image takes tens of milliseconds, which a first request
// would otherwise wait for. Each item is made once per process.
func (s *synthSource) prewarm() error {
	for si := range s.sizes {
		for v := range s.variants {
			if _, err := s.at(si, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// synthKey is everything that decides a synthetic source, so that a
// part's synthetic = {...} written in the iteration is read into the
// same source each request.
type synthKey struct {
	kind     string
	img      media.ImageSpec
	size     *distValue
	audio    media.AudioSpec
	variants int
}

// maxSynthCache bounds the inline synthetic sources a VU remembers.
const maxSynthCache = 256

var (
	imageSynthKeys = []string{"width", "height", "size", "format", "quality", "variants"}
	audioSynthKeys = []string{"seconds", "sample_rate", "format", "variants"}
)

// synthSpec reads a synthetic spec table of kind into its key.
func synthSpec(d *luaval.Decoder, path, kind string, v lua.LValue) (synthKey, bool) {
	k := synthKey{kind: kind, variants: DefaultVariants}
	keys := imageSynthKeys
	if kind == media.Audio {
		keys = audioSynthKeys
	}
	n := len(d.Errs)
	f := d.Record(path, v, keys)
	if f == nil {
		return k, false
	}
	if v := f["variants"]; v != nil {
		k.variants = d.Count(luaval.Child(path, "variants"), v, 1)
		if k.variants > maxVariants {
			d.Errorf(luaval.Child(path, "variants"), "%d is more than %d distinct items", k.variants, maxVariants)
		}
	}
	if kind == media.Audio {
		if f["seconds"] == nil {
			d.Errorf(luaval.Child(path, "seconds"), "required")
		} else {
			k.audio.Seconds = d.Number(luaval.Child(path, "seconds"), f["seconds"], 0)
		}
		if v := f["sample_rate"]; v != nil {
			k.audio.SampleRate = d.Count(luaval.Child(path, "sample_rate"), v, 1)
		}
		if v := f["format"]; v != nil {
			k.audio.Format = d.Str(luaval.Child(path, "format"), v)
		}
		if len(d.Errs) == n {
			if err := k.audio.Check(); err != nil {
				d.Errorf(path, "%v", err)
			}
		}
		return k, len(d.Errs) == n
	}
	if v := f["format"]; v != nil {
		k.img.Format = d.Str(luaval.Child(path, "format"), v)
	}
	if v := f["quality"]; v != nil {
		k.img.Quality = d.Count(luaval.Child(path, "quality"), v, 1)
	}
	switch {
	case f["size"] != nil && (f["width"] != nil || f["height"] != nil):
		d.Errorf(luaval.Child(path, "size"), "give size or width and height, not both")
	case f["size"] != nil:
		k.size = sizeValue(d, luaval.Child(path, "size"), f["size"], &k.img)
	default:
		for _, name := range []string{"width", "height"} {
			if f[name] == nil {
				d.Errorf(luaval.Child(path, name), "required (or size = {w, h} or llm.dist.choice{ {w, h}, ... })")
			}
		}
		if f["width"] != nil {
			k.img.Width = d.Count(luaval.Child(path, "width"), f["width"], 0)
		}
		if f["height"] != nil {
			k.img.Height = d.Count(luaval.Child(path, "height"), f["height"], 0)
		}
	}
	if len(d.Errs) == n {
		checkSizes(d, path, k)
	}
	return k, len(d.Errs) == n
}

// sizeValue reads size: a {w, h} pair into img, or a choice of pairs.
func sizeValue(d *luaval.Decoder, path string, v lua.LValue, img *media.ImageSpec) *distValue {
	if ud, ok := v.(*lua.LUserData); ok {
		if dv, ok := ud.Value.(*distValue); ok && dv.pairs != nil {
			return dv
		}
		d.Errorf(path, "expected {w, h} or llm.dist.choice{ {w, h}, ... }, got a distribution of numbers")
		return nil
	}
	w, h, ok := pair(d, path, v)
	if ok {
		img.Width, img.Height = w, h
	}
	return nil
}

// pair reads {w, h}.
func pair(d *luaval.Decoder, path string, v lua.LValue) (int, int, bool) {
	items := d.List(path, v)
	if items == nil {
		return 0, 0, false
	}
	if len(items) != 2 {
		d.Errorf(path, "expected {width, height}, got %d numbers", len(items))
		return 0, 0, false
	}
	n := len(d.Errs)
	w := d.Count(luaval.Index(path, 1), items[0], 0)
	h := d.Count(luaval.Index(path, 2), items[1], 0)
	return w, h, len(d.Errs) == n
}

// checkSizes checks each size an image source may draw.
func checkSizes(d *luaval.Decoder, path string, k synthKey) {
	if k.size == nil {
		if err := k.img.Check(); err != nil {
			d.Errorf(path, "%v", err)
		}
		return
	}
	for i, wh := range k.size.pairs {
		spec := k.img
		spec.Width, spec.Height = wh[0], wh[1]
		if err := spec.Check(); err != nil {
			d.Errorf(luaval.Index(luaval.Child(path, "size"), i+1), "%v", err)
		}
	}
}

// newSynthSource makes the source of k; in a VU (not at Compile, which
// only checks) it makes the items now.
func (m *Module) newSynthSource(k synthKey) (*synthSource, error) {
	s := &synthSource{kind: k.kind, img: k.img, audio: k.audio, variants: k.variants, seed: m.seed}
	s.sizes = [][2]int{{k.img.Width, k.img.Height}}
	if k.size != nil {
		s.sizes, s.choice = k.size.pairs, k.size.choice
	}
	s.items = make([]*media.Item, len(s.sizes)*s.variants)
	if m.cfg != nil {
		if err := s.prewarm(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// inlineSynthetic reads a part's synthetic = {...}: the source of its
// spec, made on the spec's first use by this VU and then looked up.
func (m *Module) inlineSynthetic(d *luaval.Decoder, path, kind string, v lua.LValue) (*synthSource, bool) {
	if kind == engine.PartVideo {
		d.Errorf(path, "video has no synthetic source (give path or url)")
		return nil, false
	}
	k, ok := synthSpec(d, path, kind, v)
	if !ok {
		return nil, false
	}
	if s := m.synths[k]; s != nil {
		return s, true
	}
	s, err := m.newSynthSource(k)
	if err != nil {
		d.Errorf(path, "%v", err)
		return nil, false
	}
	if m.synths == nil {
		m.synths = map[synthKey]*synthSource{}
	}
	if len(m.synths) < maxSynthCache {
		m.synths[k] = s
	}
	return s, true
}

// syntheticTable is llm.synthetic: called, synthetic prompts
// (newSynthetic); .image and .audio, synthetic media.
func (m *Module) syntheticTable(L *lua.LState) *lua.LTable {
	t := L.SetFuncs(L.CreateTable(0, 2), map[string]lua.LGFunction{
		"image": m.syntheticMedia(media.Image), "audio": m.syntheticMedia(media.Audio),
	})
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__call", L.NewFunction(func(L *lua.LState) int {
		L.Remove(1) // the llm.synthetic table itself
		return m.newSynthetic(L)
	}))
	mt.RawSetString("__metatable", lua.LString("llmload.synthetic"))
	L.SetMetatable(t, mt)
	return t
}

// syntheticMedia implements llm.synthetic.image{ width, height | size,
// format = "jpeg", quality = 85, variants = 16 } and llm.synthetic.audio{
// seconds, sample_rate = 16000, format = "wav", variants = 16 } ->
// source, for a part's image = / audio = or llm.transcribe's audio =.
func (m *Module) syntheticMedia(kind string) lua.LGFunction {
	return func(L *lua.LState) int {
		d := &luaval.Decoder{}
		path := "llm.synthetic." + kind
		k, _ := synthSpec(d, path, kind, L.Get(1))
		if len(d.Errs) > 0 {
			L.RaiseError("%s", strings.Join(d.Errs, "; "))
		}
		s, err := m.newSynthSource(k)
		if err != nil {
			L.RaiseError("%s: %v", path, err)
		}
		ud := L.NewUserData()
		ud.Value = s
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__metatable", lua.LString("llmload.synthetic."+kind))
		mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LString(s.String()))
			return 1
		}))
		L.SetMetatable(ud, mt)
		L.Push(ud)
		return 1
	}
}

// String names the source: "synthetic image 1024x1024 jpeg q85 ×16".
func (s *synthSource) String() string {
	if s.kind == media.Audio {
		return fmt.Sprintf("synthetic audio %s ×%d", s.audio, s.variants)
	}
	if s.choice != nil {
		return fmt.Sprintf("synthetic image of size %s ×%d", s.choice, s.variants)
	}
	spec := s.img
	spec.Width, spec.Height = s.sizes[0][0], s.sizes[0][1]
	return fmt.Sprintf("synthetic image %s ×%d", spec, s.variants)
}

// mediaPool is a VU's cursor over media shared by every VU: the images or
// audio of a directory, or the records of a media dataset.
type mediaPool struct {
	kind    string
	items   []*media.Item // a directory's files
	records *dataset.Pool // a dataset's records, each one user message of parts
	next    int
	// oneFormat is the format of all items, "" when they mix formats.
	oneFormat string
}

// len is the number of items or records.
func (p *mediaPool) len() int {
	if p.records != nil {
		return p.records.Len()
	}
	return len(p.items)
}

// format is the one format of the pool's files, "" when they mix
// formats.
func (p *mediaPool) format() string { return p.oneFormat }

// commonFormat is the format all items share, "" when they differ.
func commonFormat(items []*media.Item) string {
	f := items[0].Format
	for _, it := range items[1:] {
		if it.Format != f {
			return ""
		}
	}
	return f
}

// draw returns the pool's next file, in turn: of a dataset, the next
// record's first file of the pool's kind (what a transcription sends).
func (p *mediaPool) draw() *media.Item {
	if p.records != nil {
		for range p.records.Len() {
			rec := p.records.Item(p.next)
			p.next = (p.next + 1) % p.records.Len()
			for _, part := range rec.Messages[0].Parts {
				if part.Media != nil && part.Media.Kind == p.kind {
					return part.Media
				}
			}
		}
		return nil // LoadMedia gives every record a file
	}
	it := p.items[p.next%len(p.items)]
	p.next = (p.next + 1) % len(p.items)
	return it
}

var (
	imagePoolKeys = []string{"dir", "dataset", "field", "image_field", "max_bytes"}
	audioPoolKeys = []string{"dir", "dataset", "field", "audio_field", "max_bytes"}
)

// images implements llm.images{ dir = "path" | dataset = "file",
// field = "prompt", image_field = "image", max_bytes = 20 MB } -> pool:
// the images of a directory (and its subdirectories), or a JSONL,
// ShareGPT or LLaVA dataset whose records name image files, relative to
// the dataset's directory. Read once per process and shared by all VUs.
func (m *Module) images(L *lua.LState) int { return m.mediaPoolArg(L, media.Image) }

// audioPool implements llm.audio{ dir = "path" | dataset = "file",
// field = "prompt", audio_field = "audio", max_bytes = 20 MB } -> pool:
// the audio files of a directory, or a dataset whose records name audio
// files (a "<audio>" placeholder in the prompt, or no prompt at all as
// a speech corpus's records have). Read once per process and shared by
// all VUs.
func (m *Module) audioPool(L *lua.LState) int { return m.mediaPoolArg(L, media.Audio) }

func (m *Module) mediaPoolArg(L *lua.LState, kind string) int {
	name := "llm." + poolFunc(kind)
	keys, fieldKey := imagePoolKeys, "image_field"
	if kind == media.Audio {
		keys, fieldKey = audioPoolKeys, "audio_field"
	}
	d := &luaval.Decoder{}
	f := d.Record(name, L.Get(1), keys)
	maxBytes := 0
	if v := f["max_bytes"]; v != nil {
		maxBytes = d.Count(luaval.Child(name, "max_bytes"), v, 1)
	}
	opts := dataset.MediaOptions{Kind: kind}
	if v := f["field"]; v != nil {
		opts.Field = d.Str(luaval.Child(name, "field"), v)
	}
	if v := f[fieldKey]; v != nil {
		opts.MediaField = d.Str(luaval.Child(name, fieldKey), v)
	}
	switch {
	case f == nil:
	case f["dir"] != nil && f["dataset"] != nil:
		d.Errorf(luaval.Child(name, "dataset"), "give dir or dataset, not both")
	case f["dir"] == nil && f["dataset"] == nil:
		d.Errorf(name, "needs dir = \"path\" or dataset = \"file\"")
	case f["dataset"] == nil && (f["field"] != nil || f[fieldKey] != nil):
		d.Errorf(name, "field and %s are a dataset's options", fieldKey)
	}
	if len(d.Errs) > 0 {
		L.RaiseError("%s", strings.Join(d.Errs, "; "))
	}
	p := &mediaPool{kind: kind}
	if v := f["dir"]; v != nil {
		dir := d.Str(luaval.Child(name, "dir"), v)
		items, err := media.LoadDir(ResolveData(m.scriptDir(), dir), kind, maxBytes)
		if err != nil {
			L.RaiseError("%s: dir: %v", name, err)
		}
		p.items, p.oneFormat = items, commonFormat(items)
		m.noteItems(items)
	} else {
		file := d.Str(luaval.Child(name, "dataset"), f["dataset"])
		m.NoteFile(file)
		opts.MaxBytes = maxBytes
		path := ResolveData(m.scriptDir(), file)
		m.Loading = path
		recs, err := dataset.LoadMedia(m.Ctx, path, opts)
		if m.Ctx.Err() == nil {
			m.Loading = ""
		}
		if err != nil {
			L.RaiseError("%s: dataset: %v", name, err)
		}
		p.records = recs
		for i := range recs.Len() {
			for _, part := range recs.Item(i).Messages[0].Parts {
				if part.Media != nil {
					m.noteItems([]*media.Item{part.Media})
				}
			}
		}
	}
	if len(d.Errs) > 0 {
		L.RaiseError("%s", strings.Join(d.Errs, "; "))
	}
	if m.VUID > 0 {
		p.next = (m.VUID - 1) % p.len() // VUs starting together do not all send the first
	}
	ud := L.NewUserData()
	ud.Value = p
	L.SetMetatable(ud, m.mediaPoolMetatable(L))
	L.Push(ud)
	return 1
}

// noteItems notes the files of a pool as the script's data files, named
// relative to the script's directory, so they travel with it.
func (m *Module) noteItems(items []*media.Item) {
	if m.cfg != nil {
		return
	}
	dir := m.scriptDir()
	for _, it := range items {
		name := it.Name
		if rel, err := filepath.Rel(dir, it.Name); err == nil && dir != "" {
			name = rel
		}
		m.NoteFile(name)
	}
}

// mediaPoolMetatable is made once per VU and shared by its media pools.
func (m *Module) mediaPoolMetatable(L *lua.LState) *lua.LTable {
	if m.mediaMeta == nil {
		m.mediaMeta = drawMetatable(L, "llmload.media_pool", m.mediaPoolNext, m.mediaPoolRandom, mediaPoolLen)
	}
	return m.mediaMeta
}

func checkMediaPool(L *lua.LState) *mediaPool {
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		if p, ok := ud.Value.(*mediaPool); ok {
			return p
		}
	}
	L.ArgError(1, "media pool expected (call methods with a colon: pool:next())")
	return nil
}

// mediaPoolNext implements pool:next(): a directory's next file (for a
// part's image = / audio =), or a dataset's next record as a content
// (content = pool:next()), in turn.
func (m *Module) mediaPoolNext(L *lua.LState) int {
	p := checkMediaPool(L)
	i := p.next
	p.next = (p.next + 1) % p.len()
	L.Push(m.mediaPoolItem(L, p, i))
	return 1
}

// mediaPoolRandom implements pool:random(), uniformly drawn from the VU's
// seeded source.
func (m *Module) mediaPoolRandom(L *lua.LState) int {
	p := checkMediaPool(L)
	L.Push(m.mediaPoolItem(L, p, m.rng.IntN(p.len())))
	return 1
}

func mediaPoolLen(L *lua.LState) int {
	L.Push(lua.LNumber(checkMediaPool(L).len()))
	return 1
}

// mediaPoolItem is item i of p as a script holds it.
func (m *Module) mediaPoolItem(L *lua.LState, p *mediaPool, i int) lua.LValue {
	ud := L.NewUserData()
	if p.records != nil {
		ud.Value = &contentValue{parts: p.records.Item(i).Messages[0].Parts}
		L.SetMetatable(ud, m.contentMetatable(L))
		return ud
	}
	ud.Value = &mediaValue{item: p.items[i]}
	L.SetMetatable(ud, m.mediaValueMetatable(L))
	return ud
}

// contentMetatable gives a dataset item's fields: text (the prompt
// without its placeholders), images and audios (how many).
func (m *Module) contentMetatable(L *lua.LState) *lua.LTable {
	if m.contentMeta == nil {
		m.contentMeta = L.CreateTable(0, 2)
		m.contentMeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			cv := L.CheckUserData(1).Value.(*contentValue)
			switch L.CheckString(2) {
			case "text":
				var texts []string
				for _, p := range cv.parts {
					if p.Type == engine.PartText {
						texts = append(texts, p.Text)
					}
				}
				L.Push(lua.LString(strings.Join(texts, " ")))
			case "images", "audios":
				typ := engine.PartImage
				if L.CheckString(2) == "audios" {
					typ = engine.PartAudio
				}
				n := 0
				for _, p := range cv.parts {
					if p.Type == typ {
						n++
					}
				}
				L.Push(lua.LNumber(n))
			default:
				L.Push(lua.LNil)
			}
			return 1
		}))
		m.contentMeta.RawSetString("__metatable", lua.LString("llmload.content"))
	}
	return m.contentMeta
}

// mediaValueMetatable gives a media item's fields: name, format, bytes,
// width, height, seconds.
func (m *Module) mediaValueMetatable(L *lua.LState) *lua.LTable {
	if m.itemMeta == nil {
		m.itemMeta = L.CreateTable(0, 2)
		m.itemMeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			it := L.CheckUserData(1).Value.(*mediaValue).item
			switch L.CheckString(2) {
			case "name":
				L.Push(lua.LString(it.Name))
			case "format":
				L.Push(lua.LString(it.Format))
			case "bytes":
				L.Push(lua.LNumber(it.Size()))
			case "width":
				L.Push(lua.LNumber(it.Width))
			case "height":
				L.Push(lua.LNumber(it.Height))
			case "seconds":
				L.Push(lua.LNumber(it.Seconds))
			default:
				L.Push(lua.LNil)
			}
			return 1
		}))
		m.itemMeta.RawSetString("__metatable", lua.LString("llmload.media"))
	}
	return m.itemMeta
}
