package api

import (
	"runtime"
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

// NoteFile records a data file the script's top level reads at Compile
// (m.cfg is nil there and only there). The VUs read the same files again
// when they run the top level, which adds nothing.
func (m *Module) NoteFile(name string) {
	if m.cfg != nil {
		return
	}
	NoteProgramFile(m.prog, name)
}

// NoteProgramFile records a data file of p found other than by running
// its top level: a media file a content part names literally.
func NoteProgramFile(p *Program, name string) {
	key := weak.Make(p)
	v, loaded := compiledFiles.LoadOrStore(key, &fileLog{names: map[string]bool{}})
	if !loaded {
		runtime.AddCleanup(p, func(k weak.Pointer[Program]) { compiledFiles.Delete(k) }, key)
	}
	log := v.(*fileLog)
	log.mu.Lock()
	defer log.mu.Unlock()
	log.names[name] = true
}

// FilesRead lists the data files p's top level read at Compile, as the
// script named them, in no order.
func FilesRead(p *Program) []string {
	v, ok := compiledFiles.Load(weak.Make(p))
	if !ok {
		return nil
	}
	log := v.(*fileLog)
	log.mu.Lock()
	defer log.mu.Unlock()
	out := make([]string, 0, len(log.names))
	for name := range log.names {
		out = append(out, name)
	}
	return out
}
