package media

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// memo holds every item this process has read or made, by key, so each
// file is read and encoded once whatever the number of VUs and pools
// that name it.
var memo sync.Map // key → *entry

type entry struct {
	once sync.Once
	item *Item
	err  error
}

// Memo returns the item of key, made by make on the key's first use and
// shared after (with its error: a bad file is reported the same way to
// every caller).
func Memo(key string, make func() (*Item, error)) (*Item, error) {
	e, _ := memo.LoadOrStore(key, &entry{})
	en := e.(*entry)
	en.once.Do(func() { en.item, en.err = make() })
	return en.item, en.err
}

// Load returns the file at path as an item, read and checked once per
// process. maxBytes bounds it (0: DefaultMaxBytes; negative: no bound).
func Load(path string, maxBytes int) (*Item, error) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return Memo(fmt.Sprintf("file:%d:%s", maxBytes, abs), func() (*Item, error) {
		st, err := os.Stat(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such file", path)
			}
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s: a directory, not a file (name it as dir = ...)", path)
		}
		if maxBytes > 0 && st.Size() > int64(maxBytes) {
			return nil, fmt.Errorf("%s: %s is larger than the bound of %s (set max_bytes to allow it)",
				path, Bytes(st.Size()), Bytes(int64(maxBytes)))
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		return New(path, data, maxBytes)
	})
}

// extensions of the files LoadDir reads, by kind.
var extensions = map[string][]string{
	Image: {".png", ".jpg", ".jpeg", ".gif", ".webp"},
	Audio: {".wav", ".mp3", ".flac", ".ogg", ".opus"},
	Video: {".mp4", ".webm"},
}

// LoadDir returns the files of kind in dir and its subdirectories, by
// name, each loaded as Load does. A directory with none is an error; so
// is a file of the kind's extension that is not of the kind.
func LoadDir(dir, kind string, maxBytes int) ([]*Item, error) {
	exts, ok := extensions[kind]
	if !ok {
		return nil, fmt.Errorf("unknown media kind %q", kind)
	}
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such directory", dir)
		}
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(p))
		for _, e := range exts {
			if ext == e {
				paths = append(paths, p)
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no %s files in it (%s)", dir, kind, strings.Join(exts, ", "))
	}
	sort.Strings(paths)
	items := make([]*Item, len(paths))
	for i, p := range paths {
		it, err := Load(p, maxBytes)
		if err != nil {
			return nil, err
		}
		if it.Kind != kind {
			return nil, fmt.Errorf("%s: a %s file, not %s", p, it.Format, kind)
		}
		items[i] = it
	}
	return items, nil
}

// SyntheticImage returns the synthetic image of spec, seed and variant, made once
// per process.
func SyntheticImage(spec ImageSpec, seed uint64, variant int) (*Item, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	spec = spec.normal()
	return Memo(fmt.Sprintf("image:%d:%d:%s:%d:%d", spec.Width, spec.Height, spec.Format, spec.Quality, seed)+fmt.Sprint(":", variant),
		func() (*Item, error) { return SynthImage(spec, seed, variant) })
}

// SyntheticAudio returns the synthetic audio of spec, seed and variant, made once
// per process.
func SyntheticAudio(spec AudioSpec, seed uint64, variant int) (*Item, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	spec = spec.normal()
	return Memo(fmt.Sprintf("audio:%g:%d:%s:%d:%d", spec.Seconds, spec.SampleRate, spec.Format, seed, variant),
		func() (*Item, error) { return SynthAudio(spec, seed, variant) })
}
