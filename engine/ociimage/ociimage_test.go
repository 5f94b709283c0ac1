package ociimage

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBuildRefusesBadSpecs: every bad field gets an error naming it.
func TestBuildRefusesBadSpecs(t *testing.T) {
	text := writeFile(t, "script.sh", []byte("#!/bin/sh\necho hi\n"))
	emptyFile := writeFile(t, "empty", nil)
	notPEM := writeFile(t, "certs.txt", []byte("no certificates here\n"))
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"no binary", func(s *Spec) { s.Binary = "" }, "binary: required"},
		{"missing binary", func(s *Spec) { s.Binary = "/nonexistent/llmload" }, "binary: stat /nonexistent/llmload: no such file"},
		{"binary is a directory", func(s *Spec) { s.Binary = t.TempDir() }, "not a regular file"},
		{"empty binary", func(s *Spec) { s.Binary = emptyFile }, "binary " + emptyFile + ": empty file"},
		{"not ELF", func(s *Spec) { s.Binary = text }, "binary " + text + ": not an ELF executable"},
		{"dynamic", func(s *Spec) { s.Binary = dynamicBinary },
			"binary " + dynamicBinary + " is dynamically linked (needs /lib"},
		{"dynamic says how", func(s *Spec) { s.Binary = dynamicBinary }, "build it with CGO_ENABLED=0"},
		{"other architecture", func(s *Spec) { s.Platform = "linux/" + otherArch() },
			"not for the image's architecture " + otherArch() + ": build it with GOARCH=" + otherArch()},
		{"no entrypoint", func(s *Spec) { s.Entrypoint = nil }, "entrypoint: required"},
		{"relative entrypoint", func(s *Spec) { s.Entrypoint = []string{"llmload"} }, `entrypoint: "llmload" is not an absolute path`},
		{"entrypoint not the binary", func(s *Spec) { s.Path = "/bin/llmload" }, `entrypoint: "/llmload" is not in the image: the binary is at "/bin/llmload"`},
		{"unclean path", func(s *Spec) { s.Path = "/a/../llmload" }, `path: "/a/../llmload" is not a clean absolute file path`},
		{"root path", func(s *Spec) { s.Entrypoint = []string{"/"} }, `path: "/" is not a clean absolute file path`},
		{"path over the certs", func(s *Spec) { s.Entrypoint = []string{"/etc/ssl"} }, `path: "/etc/ssl" collides with the CA bundle`},
		{"path is the certs", func(s *Spec) { s.Entrypoint = []string{CertsPath} }, "collides with the CA bundle"},
		{"no user", func(s *Spec) { s.User = "" }, "user: required: a numeric UID[:GID]"},
		{"named user", func(s *Spec) { s.User = "nonroot" }, `user: "nonroot" is not a numeric UID[:GID]`},
		{"named group", func(s *Spec) { s.User = "65532:nonroot" }, `user: "65532:nonroot"`},
		{"empty group", func(s *Spec) { s.User = "65532:" }, `user: "65532:"`},
		{"negative uid", func(s *Spec) { s.User = "-1" }, `user: "-1"`},
		{"no-id uid", func(s *Spec) { s.User = "4294967295" }, `user: "4294967295"`},
		{"padded uid", func(s *Spec) { s.User = "065532" }, `user: "065532"`},
		{"env without =", func(s *Spec) { s.Env = []string{"DEBUG"} }, `env: "DEBUG" is not KEY=VALUE`},
		{"env without key", func(s *Spec) { s.Env = []string{"=1"} }, `env: "=1"`},
		{"empty label key", func(s *Spec) { s.Labels = map[string]string{"": "x"} }, `labels: "" is not a label key`},
		{"windows", func(s *Spec) { s.Platform = "windows/amd64" }, `platform: "windows/amd64": only linux images`},
		{"unknown architecture", func(s *Spec) { s.Platform = "linux/mips" }, `platform: architecture "mips" is not one of 386, amd64, arm`},
		{"no architecture", func(s *Spec) { s.Platform = "linux" }, `platform: "linux" is not os/arch`},
		{"missing certs", func(s *Spec) { s.Certs = "/nonexistent/ca.crt" }, "certs: stat /nonexistent/ca.crt: no such file"},
		{"certs not PEM", func(s *Spec) { s.Certs = notPEM }, "certs " + notPEM + ": no PEM certificate in it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmloadSpec()
			tt.change(&s)
			img, err := Build(s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Build: %v, want an error with %q", err, tt.want)
			}
			if img != nil {
				t.Error("an image with the error")
			}
		})
	}
}

// TestBuildIsReproducible: the digest depends on the files' contents and
// the config, not on where the files are or their times and modes.
func TestBuildIsReproducible(t *testing.T) {
	base := digest(t, llmloadSpec())
	if again := digest(t, llmloadSpec()); again != base {
		t.Errorf("two builds of one spec: %s and %s", base, again)
	}
	moved := copyFile(t, staticA, filepath.Join(t.TempDir(), "elsewhere"), 0o700)
	if err := os.Chtimes(moved, time1999, time1999); err != nil {
		t.Fatal(err)
	}
	s := llmloadSpec()
	s.Binary = moved
	if got := digest(t, s); got != base {
		t.Errorf("the same binary elsewhere, with another mode and time: %s, want %s", got, base)
	}
	changes := map[string]func(*Spec){
		"another binary": func(s *Spec) { s.Binary = staticB },
		"another CA":     func(s *Spec) { s.Certs = certsB },
		"no CA":          func(s *Spec) { s.Certs = "" },
		"another user":   func(s *Spec) { s.User = "65534" },
		"a label":        func(s *Spec) { s.Labels = map[string]string{"org.opencontainers.image.version": "1"} },
		"another path":   func(s *Spec) { s.Entrypoint = []string{"/bin/llmload"} },
	}
	for name, change := range changes {
		s := llmloadSpec()
		change(&s)
		if got := digest(t, s); got == base {
			t.Errorf("%s: the same digest %s", name, got)
		}
	}
}

// TestTarballReadBack: the written tarball, read back as docker load
// reads it, holds the config and the files as built.
func TestTarballReadBack(t *testing.T) {
	s := llmloadSpec()
	s.Env = []string{"GODEBUG=madvdontneed=1"}
	s.Labels = map[string]string{"org.opencontainers.image.source": "https://github.com/llmload/llmload"}
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "llmload.tar")
	if err := WriteTarballFile(out, img, "localhost/llmload:dev"); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, got := mustDigest(t, img), mustDigest(t, back); got != want {
		t.Errorf("read back: digest %s, want %s", got, want)
	}
	checkConfig(t, back, s)
	bin, certs := mustRead(t, staticA), mustRead(t, certsA)
	checkFiles(t, back, []entry{
		{"etc/", tar.TypeDir, 0o755, nil}, {"etc/ssl/", tar.TypeDir, 0o755, nil}, {"etc/ssl/certs/", tar.TypeDir, 0o755, nil},
		{"etc/ssl/certs/ca-certificates.crt", tar.TypeReg, 0o644, certs}, {"llmload", tar.TypeReg, 0o755, bin},
	})
	checkRepoTags(t, out, "localhost/llmload:dev")
}

// TestPauseLikeImage: no certs, a uid alone, the binary at the
// entrypoint's path, nested directories made for it.
func TestPauseLikeImage(t *testing.T) {
	s := Spec{Binary: staticB, Entrypoint: []string{"/usr/local/bin/pause", "-v"}, User: "65535"}
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, img, s)
	checkFiles(t, img, []entry{
		{"usr/", tar.TypeDir, 0o755, nil}, {"usr/local/", tar.TypeDir, 0o755, nil}, {"usr/local/bin/", tar.TypeDir, 0o755, nil},
		{"usr/local/bin/pause", tar.TypeReg, 0o755, mustRead(t, staticB)},
	})
	out := filepath.Join(t.TempDir(), "pause.tar")
	if err := WriteTarballFile(out, img, "llmload/pause:v1"); err != nil {
		t.Fatal(err)
	}
	checkRepoTags(t, out, "llmload/pause:v1")
}

// TestParseTag: names are taken as given, with an explicit tag.
func TestParseTag(t *testing.T) {
	for _, ref := range []string{"localhost/llmload:dev", "llmload:dev", "localhost/llmload/pause:v1.34.4",
		"127.0.0.1:5000/llmload:v1", "registry.example.com:5000/team/llmload:0.1.0"} {
		tag, err := ParseTag(ref)
		if err != nil || tag.String() != ref {
			t.Errorf("ParseTag(%q) = %q, %v; want it as given", ref, tag.String(), err)
		}
	}
	bad := map[string]string{
		"":                       "is not an image name",
		"localhost/llmload":      "has no tag",
		"localhost:5000/llmload": "has no tag",
		"localhost/LLMload:dev":  "is not an image name",
		"llmload:":               "is not an image name",
		"llmload:bad tag":        "is not an image name",
		"llmload@sha256:" + strings.Repeat("a", 64): "is not an image name",
	}
	for ref, want := range bad {
		if _, err := ParseTag(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTag(%q): %v, want an error with %q", ref, err, want)
		}
	}
}

// TestWriteTarballFileLeavesNothingOnError: a bad name writes no file.
func TestWriteTarballFileLeavesNothingOnError(t *testing.T) {
	img, err := Build(llmloadSpec())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTarballFile(filepath.Join(dir, "x.tar"), img, "NoTag"); err == nil {
		t.Fatal("no error for a bad name")
	}
	if err := WriteTarballFile(filepath.Join(dir, "missing", "x.tar"), img, "llmload:dev"); err == nil || !strings.Contains(err.Error(), "out:") {
		t.Errorf("a missing directory: %v, want an out: error", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

var time1999 = epoch.AddDate(29, 0, 0)

type entry struct {
	name string
	typ  byte
	mode int64
	data []byte
}

func checkConfig(t *testing.T, img v1.Image, s Spec) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, s.Entrypoint) || c.User != s.User || c.WorkingDir != "/" || !slices.Equal(c.Env, s.Env) || c.Cmd != nil {
		t.Errorf("config: entrypoint %q user %q workdir %q env %q cmd %q, want %q %q / %q none",
			c.Entrypoint, c.User, c.WorkingDir, c.Env, c.Cmd, s.Entrypoint, s.User, s.Env)
	}
	for k, v := range s.Labels {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if cf.OS != "linux" || cf.Architecture != hostArch() || !cf.Created.Time.Equal(epoch) {
		t.Errorf("config: %s/%s created %v, want linux/%s at the epoch", cf.OS, cf.Architecture, cf.Created.Time, hostArch())
	}
}

// hostArch is this machine's architecture, the default platform's.
func hostArch() string { return strings.TrimPrefix(defaultPlatform(), "linux/") }

// checkFiles reads the image's one layer, uncompressed, and compares its
// entries with want, owners and times included.
func checkFiles(t *testing.T, img v1.Image, want []entry) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: owner %d:%d time %v, want 0:0 at the epoch", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, entry{h.Name, h.Typeflag, h.Mode, data})
	}
	if len(got) != len(want) {
		t.Fatalf("layer entries %v, want %v", names(got), names(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.name != w.name || g.typ != w.typ || g.mode != w.mode || string(g.data) != string(w.data) {
			t.Errorf("entry %d: %s type %c mode %o (%d bytes), want %s %c %o (%d bytes)",
				i, g.name, g.typ, g.mode, len(g.data), w.name, w.typ, w.mode, len(w.data))
		}
	}
}

func names(es []entry) []string {
	var n []string
	for _, e := range es {
		n = append(n, e.name)
	}
	return n
}

// checkRepoTags reads the tarball's manifest.json, what docker load and
// ctr import take the image's name from.
func checkRepoTags(t *testing.T, path, want string) {
	t.Helper()
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || !slices.Equal(m[0].RepoTags, []string{want}) {
		t.Errorf("manifest.json %+v, want one image tagged %s", m, want)
	}
}

func digest(t *testing.T, s Spec) string {
	t.Helper()
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return mustDigest(t, img)
}

func mustDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(to, mustRead(t, from), mode); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestValidateReadsNoFile: the fields are checked before the binary
// exists, as the command does before it builds one.
func TestValidateReadsNoFile(t *testing.T) {
	s := llmloadSpec()
	s.Binary, s.Certs = "/nonexistent/llmload", "/nonexistent/ca.crt"
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v, want no error for files not yet there", err)
	}
	s.User = "nonroot"
	if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), "user: ") {
		t.Errorf("Validate: %v, want a user: error", err)
	}
}
