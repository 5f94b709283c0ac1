package luabind

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"
)

// fileLog is the data files one Compile's top level read, each as the
// script named it. Compile's run of the top level is the only writer.
type fileLog struct {
	mu    sync.Mutex
	names map[string]bool
}

// compiledFiles holds each compiled Script's fileLog beside it, keyed by
// a weak pointer so that the entry goes when the Script does. Recording
// from the loaders this way needs nothing of the Script's construction;
// Files, its only reader, runs once per command at most.
var compiledFiles sync.Map // weak.Pointer[Program] → *fileLog

// noteFile records a data file the script's top level reads at Compile
// (m.cfg is nil there and only there). The VUs read the same files again
// when they run the top level, which adds nothing.
func (m *module) noteFile(name string) {
	if m.cfg != nil {
		return
	}
	key := weak.Make(m.prog)
	v, loaded := compiledFiles.LoadOrStore(key, &fileLog{names: map[string]bool{}})
	if !loaded {
		runtime.AddCleanup(m.prog, func(k weak.Pointer[Program]) { compiledFiles.Delete(k) }, key)
	}
	log := v.(*fileLog)
	log.mu.Lock()
	defer log.mu.Unlock()
	log.names[name] = true
}

// Files lists the data files the script's top level read at Compile
// (llm.pool.text, .jsonl, .sharegpt and .csv), sorted and deduplicated,
// for shipping a scenario with its data (llmload k8s). A file named by a
// relative path inside the script's directory is given relative to that
// directory, with '/' separators: it is found again wherever the script
// and its data are copied together. Any other file — an absolute path,
// or one that climbs out with ".." — is given as an absolute path, so
// the caller can refuse it by name: it would not travel with the script.
// A file loaded only later, in setup() or an iteration, is not listed.
func (s *Script) Files() []string {
	v, ok := compiledFiles.Load(weak.Make(s.Program))
	if !ok {
		return nil
	}
	log := v.(*fileLog)
	log.mu.Lock()
	defer log.mu.Unlock()
	dir := filepath.Dir(s.path)
	out := make([]string, 0, len(log.names))
	for name := range log.names {
		out = append(out, portablePath(dir, name))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// portablePath is name relative to dir when it is a relative path that
// stays inside dir, else name as an absolute path.
func portablePath(dir, name string) string {
	if !filepath.IsAbs(name) {
		rel := filepath.Clean(name)
		if rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
		name = filepath.Join(dir, name)
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return filepath.Clean(name)
}
