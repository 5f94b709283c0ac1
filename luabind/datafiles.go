package luabind

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmload/llmload/luabind/api"
)

// Files lists the data files the script's top level read at Compile
// (llm.pool.text, .jsonl, .sharegpt and .csv, llm.images, llm.audio), sorted and deduplicated,
// for shipping a scenario with its data (llmload k8s). A file named by a
// relative path inside the script's directory is given relative to that
// directory, with '/' separators: it is found again wherever the script
// and its data are copied together. Any other file — an absolute path,
// or one that climbs out with ".." — is given as an absolute path, so
// the caller can refuse it by name: it would not travel with the script.
// The files of llm.images and llm.audio pools, and those content parts
// and llm.transcribe name by a literal path, are listed too; any other
// file loaded only later, in setup() or an iteration, is not.
func (s *Script) Files() []string {
	names := api.FilesRead(s.Program)
	if names == nil {
		return nil
	}
	dir := filepath.Dir(s.Path)
	out := make([]string, 0, len(names))
	for _, name := range names {
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
