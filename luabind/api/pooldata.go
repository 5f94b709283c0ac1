package api

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmload/llmload/engine/dataset"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/tokenize"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// poolSpec is everything that decides a loaded pool's contents.
type poolSpec struct {
	format    string // "text", "jsonl", "sharegpt" or "csv"
	path      string // resolved against the script's directory
	opts      dataset.Options
	minTokens int
	maxTokens int
	tokenizer string
}

// loadPool reads the file and keeps the items whose input length is within
// [minTokens, maxTokens] when either bound is set. Reading stops once ctx
// is done, so the init time limit covers loading a large file.
func loadPool(ctx context.Context, spec poolSpec) (*dataset.Pool, error) {
	p, err := readPool(ctx, spec)
	if err != nil {
		return nil, err
	}
	if spec.minTokens == 0 && spec.maxTokens == 0 {
		return p, nil
	}
	codec, err := tokenize.Get(spec.tokenizer)
	if err != nil {
		return nil, fmt.Errorf("min_tokens/max_tokens: %w", err)
	}
	return p.Filter(spec.minTokens, spec.maxTokens, codec)
}

func readPool(ctx context.Context, spec poolSpec) (*dataset.Pool, error) {
	switch spec.format {
	case "text":
		return dataset.LoadText(ctx, spec.path)
	case "jsonl":
		return dataset.LoadJSONL(ctx, spec.path, spec.opts)
	case "sharegpt":
		return dataset.LoadShareGPT(ctx, spec.path, spec.opts)
	case "csv":
		return dataset.LoadCSV(ctx, spec.path, spec.opts)
	}
	return nil, fmt.Errorf("unknown pool format %q", spec.format)
}

// poolOptionKeys are the options every file loader takes; formatKeys adds
// each format's own.
var (
	poolOptionKeys = []string{"min_tokens", "max_tokens", "tokenizer"}
	formatKeys     = map[string][]string{
		"text": nil, "jsonl": {"field"}, "sharegpt": {"conversations"}, "csv": {"column"},
	}
)

// poolText implements llm.pool.text(path [, {min_tokens=, max_tokens=,
// tokenizer=}]) -> pool: one prompt per non-empty line.
func (m *Module) poolText(L *lua.LState) int { return m.loadPoolArg(L, "text") }

// poolJSONL implements llm.pool.jsonl(path [, {field="prompt", min_tokens=,
// max_tokens=, tokenizer=}]) -> pool: one JSON object per line, the prompt
// in field.
func (m *Module) poolJSONL(L *lua.LState) int { return m.loadPoolArg(L, "jsonl") }

// poolShareGPT implements llm.pool.sharegpt(path [, {conversations=false,
// min_tokens=, max_tokens=, tokenizer=}]) -> pool: each conversation's
// first human turn as a string, or with conversations = true each whole
// conversation as a messages table.
func (m *Module) poolShareGPT(L *lua.LState) int { return m.loadPoolArg(L, "sharegpt") }

// poolCSV implements llm.pool.csv(path [, {column="prompt", min_tokens=,
// max_tokens=, tokenizer=}]) -> pool: the prompt column of each row.
func (m *Module) poolCSV(L *lua.LState) int { return m.loadPoolArg(L, "csv") }

// loadPoolArg reads a loader's arguments, loads (or reuses) the pool and
// pushes this VU's cursor over it. Paths are relative to the script's
// directory, so a scenario runs the same from any working directory.
func (m *Module) loadPoolArg(L *lua.LState, format string) int {
	name := "llm.pool." + format
	spec := poolSpec{format: format, path: L.CheckString(1), tokenizer: m.initTokenizer(L)}
	m.NoteFile(spec.path)
	if !filepath.IsAbs(spec.path) {
		spec.path = filepath.Join(filepath.Dir(m.prog.Path), spec.path)
	}
	if L.GetTop() >= 2 {
		m.poolOptions(L, name, &spec)
	}
	// dataset memoises loads and filters per process, so the VUs, which
	// all run this top level, share the *Pool that Compile loaded.
	m.Loading = spec.path
	p, err := loadPool(m.Ctx, spec)
	if m.Ctx.Err() == nil {
		m.Loading = "" // kept when cut short, for Compile's time-limit message
	}
	if err != nil {
		L.RaiseError("%s(%q): %v", name, L.CheckString(1), err)
	}
	if p.Len() == 0 {
		L.RaiseError("%s(%q): the pool is empty", name, L.CheckString(1))
	}
	L.Push(m.newPoolValue(L, p))
	return 1
}

// poolOptions reads argument 2 into spec, raising every problem at once.
func (m *Module) poolOptions(L *lua.LState, name string, spec *poolSpec) {
	d := &ArgDecoder{}
	path := name + " options"
	f := d.Record(path, L.Get(2), append(append([]string(nil), poolOptionKeys...), formatKeys[spec.format]...))
	if v := f["field"]; v != nil {
		spec.opts.Field = d.Str(luaval.Child(path, "field"), v)
	}
	if v := f["column"]; v != nil {
		spec.opts.Column = d.Str(luaval.Child(path, "column"), v)
	}
	if v := f["conversations"]; v != nil {
		spec.opts.Conversations = d.Boolean(luaval.Child(path, "conversations"), v)
	}
	if v := f["min_tokens"]; v != nil {
		spec.minTokens = d.Count(luaval.Child(path, "min_tokens"), v, 0)
	}
	if v := f["max_tokens"]; v != nil {
		spec.maxTokens = d.Count(luaval.Child(path, "max_tokens"), v, 1)
	}
	if v := f["tokenizer"]; v != nil {
		spec.tokenizer = m.tokenizerOption(&d.Decoder, luaval.Child(path, "tokenizer"), v)
	}
	if spec.maxTokens > 0 && spec.minTokens > spec.maxTokens {
		d.Errorf(path, "min_tokens (%d) must be ≤ max_tokens (%d)", spec.minTokens, spec.maxTokens)
	}
	if (spec.minTokens > 0 || spec.maxTokens > 0) && spec.tokenizer == "none" {
		d.Errorf(path, `min_tokens and max_tokens need a tokenizer, not "none"`)
	}
	if err := d.Joined(); err != nil {
		L.RaiseError("%v", err)
	}
}

// initTokenizer is the tokenizer pools and synthetic prompts count with
// unless told otherwise: options.target.tokenizer when the script has set
// options by the time it loads the pool (a tokenizer.json resolved against
// the script's directory), else engine.DefaultTokenizer. A bad value is
// left to the options check, which reports it.
func (m *Module) initTokenizer(L *lua.LState) string {
	opts, ok := luaval.Plain(L.GetGlobal("options")).(*lua.LTable)
	if !ok {
		return plan.DefaultTokenizer
	}
	target, ok := luaval.Plain(opts.RawGetString("target")).(*lua.LTable)
	if !ok {
		return plan.DefaultTokenizer
	}
	s, ok := target.RawGetString("tokenizer").(lua.LString)
	switch {
	case ok && luaval.Contains(tokenizers, string(s)):
		return string(s)
	case ok && tokenize.IsFile(string(s)):
		m.NoteFile(string(s))
		return ResolveData(filepath.Dir(m.prog.Path), string(s))
	}
	return plan.DefaultTokenizer
}

// tokenizerOption reads a loader's tokenizer = option, noting a
// tokenizer.json as one of the script's data files so that it travels
// with the scenario.
func (m *Module) tokenizerOption(d *luaval.Decoder, path string, v lua.LValue) string {
	if s, ok := v.(lua.LString); ok && tokenize.IsFile(string(s)) {
		m.NoteFile(string(s))
	}
	return DecodeTokenizer(d, path, v, filepath.Dir(m.prog.Path))
}

// tokenizers are the offline tokenizers options.target.tokenizer may
// name: tiktoken encodings, or "none" to count no tokens client-side; it
// may also give the path of a tokenizer.json (tokenize.IsFile).
var tokenizers = append(tokenize.Names(), "none")

// DecodeTokenizer reads the name of an offline tokenizer, or the path of a
// tokenizer.json, which it resolves against dir (the script's directory)
// and loads now: a missing or malformed file is an error of the script,
// naming the option and the file, not of the run. A misspelt name is
// caught here rather than silently counting with another.
func DecodeTokenizer(d *luaval.Decoder, path string, v lua.LValue, dir string) string {
	name := d.Str(path, v)
	if _, isStr := v.(lua.LString); !isStr || luaval.Contains(tokenizers, name) {
		return name
	}
	if tokenize.IsFile(name) {
		file := ResolveData(dir, name)
		if _, err := tokenize.Get(file); err != nil {
			d.Errorf(path, "%v", strings.TrimPrefix(err.Error(), "tokenize: "))
		}
		return file
	}
	msg := fmt.Sprintf("unknown tokenizer %q", name)
	if best, ok := luaval.Nearest(name, tokenizers); ok {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	}
	d.Errorf(path, "%s (valid: %s), or the path of the model's tokenizer.json", msg, strings.Join(tokenizers, ", "))
	return ""
}

// ResolveData is a data file's path: relative ones are the script
// directory's (dir; "" for the working directory).
func ResolveData(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	return filepath.Join(dir, name)
}
