package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/llmload/llmload/engine/ociimage"
)

// summary is one line of the command's stdout.
var summary = regexp.MustCompile(`^(\S+) (sha256:[0-9a-f]{64}) \((\d+\.\d) (kB|MB)\) (written to (.+)|pushed)$`)

// TestRunBuildsLlmload: from the repository's root, with no --binary,
// the command builds ./cmd/llmload, writes the tarball and pushes the
// same image; the binary in it is llmload and static.
func TestRunBuildsLlmload(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	push := strings.TrimPrefix(srv.URL, "http://") + "/llmload:test"
	out := filepath.Join(t.TempDir(), "llmload.tar")
	t.Chdir("../..")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--out", out, "--push", push, "--version", "9.9.9-test"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout %q, want a line for the tarball and one for the push", stdout.String())
	}
	written, pushed := summary.FindStringSubmatch(lines[0]), summary.FindStringSubmatch(lines[1])
	if written == nil || written[1] != DefaultName || written[6] != out || written[4] != "MB" {
		t.Fatalf("stdout %q, want %q NAME DIGEST (N MB) written to %s", lines[0], DefaultName, out)
	}
	if pushed == nil || pushed[1] != push || pushed[2] != written[2] || pushed[5] != "pushed" {
		t.Fatalf("stdout %q, want %s with digest %s pushed", lines[1], push, written[2])
	}
	img := readTarball(t, out, written[2])
	checkConfig(t, img, []string{ociimage.DefaultPath}, ociimage.DefaultUser)
	files := layerFiles(t, img)
	if got, want := slices.Sorted(maps.Keys(files)), []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "llmload"}; !slices.Equal(got, want) {
		t.Errorf("layer %q, want %q", got, want)
	}
	checkRunsAsLlmload(t, files["llmload"], "9.9.9-test")
	tag, _ := name.NewTag(push)
	remoteImg, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := remoteImg.Digest(); d.String() != written[2] {
		t.Errorf("registry has %s, stdout says %s", d, written[2])
	}
}

// TestRunPauseImage runs the command exactly as .ci/kube.sh does for the
// test cluster's pause image, with a static stand-in for the binary.
func TestRunPauseImage(t *testing.T) {
	bin := buildStatic(t)
	out := filepath.Join(t.TempDir(), "pause.tar")
	var stdout, stderr bytes.Buffer
	args := []string{"--binary", bin, "--entrypoint", "/pause", "--user", "65535", "--name", "localhost/llmload/pause:v1.34.4", "--no-certs", "--out", out}
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	m := summary.FindStringSubmatch(strings.TrimSpace(stdout.String()))
	if m == nil || m[1] != "localhost/llmload/pause:v1.34.4" || m[6] != out {
		t.Fatalf("stdout %q", stdout.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}
	img := readTarball(t, out, m[2])
	checkConfig(t, img, []string{"/pause"}, "65535")
	files := layerFiles(t, img)
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, []string{"pause"}) {
		t.Errorf("layer %q, want only pause", got)
	}
	if want, _ := os.ReadFile(bin); !bytes.Equal(files["pause"], want) {
		t.Error("the layer's pause is not the binary")
	}
}

// TestRunUsageErrors: bad flags exit 2 with a message naming the flag,
// before anything is built.
func TestRunUsageErrors(t *testing.T) {
	bin := buildStatic(t)
	t.Chdir(t.TempDir()) // not the repository's root
	out := filepath.Join(t.TempDir(), "x.tar")
	ok := []string{"--binary", bin, "--no-certs", "--out", out}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no binary outside the root", []string{"--no-certs", "--out", out}, "--binary PATH is required outside the llmload repository's root"},
		{"nowhere to go", []string{"--binary", bin, "--no-certs"}, "--out FILE.tar or --push REF is required"},
		{"certs and no certs", append(ok, "--certs", "/etc/ssl/certs/ca-certificates.crt"), "--certs and --no-certs: pass one"},
		{"empty certs", []string{"--binary", bin, "--certs", "", "--out", out}, `--certs "": pass a CA bundle`},
		{"name without tag", append(ok, "--name", "localhost/llmload"), `--name: "localhost/llmload" has no tag`},
		{"uppercase name", append(ok, "--name", "localhost/LLMload:dev"), `--name: "localhost/LLMload:dev" is not an image name`},
		{"push without tag", append(ok, "--push", "127.0.0.1:5000/llmload"), `--push: "127.0.0.1:5000/llmload" has no tag`},
		{"named user", append(ok, "--user", "nonroot"), `user: "nonroot" is not a numeric UID[:GID]`},
		{"relative entrypoint", append(ok, "--entrypoint", "pause"), `entrypoint: "pause" is not an absolute path`},
		{"bad platform", append(ok, "--platform", "darwin/arm64"), `platform: "darwin/arm64": only linux images`},
		{"bad label", append(ok, "--label", "version"), `--label "version": want KEY=VALUE`},
		{"bad env", append(ok, "--env", "DEBUG"), `env: "DEBUG" is not KEY=VALUE`},
		{"out is a directory", []string{"--binary", bin, "--no-certs", "--out", t.TempDir()}, "is a directory"},
		{"argument", append(ok, "extra"), `unexpected argument "extra"`},
		{"unknown flag", append(ok, "--path", "/x"), "unknown flag: --path"},
		{"version with binary", append(ok, "--version", "1.0"), "--version is the version of the llmload this command builds: not with --binary"},
		{"version with space", []string{"--version", "1 0", "--no-certs", "--out", out}, `--version "1 0": no spaces or quotes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr.String(), exitUsage, tt.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q", stdout.String())
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s written", out)
			}
		})
	}
}

// TestRunFileErrors: a binary or CA bundle that cannot go in the image
// exits 1, naming the file.
func TestRunFileErrors(t *testing.T) {
	bin := buildStatic(t)
	out := filepath.Join(t.TempDir(), "x.tar")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"dynamic", []string{"--binary", "/usr/bin/true", "--no-certs", "--out", out}, "binary /usr/bin/true is dynamically linked (needs /lib"},
		{"missing binary", []string{"--binary", "/nonexistent/pause", "--no-certs", "--out", out}, "binary: stat /nonexistent/pause"},
		{"missing certs", []string{"--binary", bin, "--certs", "/nonexistent/ca.crt", "--out", out}, "certs: stat /nonexistent/ca.crt"},
		{"no registry", []string{"--binary", bin, "--no-certs", "--push", "127.0.0.1:1/llmload:dev"}, "push 127.0.0.1:1/llmload:dev:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != exitError || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d with %q", code, stderr.String(), exitError, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s written", out)
			}
		})
	}
}

// TestRunHelp prints the usage and every flag, and exits 0.
func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"ctr -n k8s.io images import", "docker load", "--binary", "--entrypoint", "--no-certs", "--push"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("help has no %q", want)
		}
	}
}

// buildStatic compiles a tiny static Go program, the pause stand-in.
func buildStatic(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module fixture\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() { select {} }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// readTarball reads the tarball as docker load would and checks its digest.
func readTarball(t *testing.T, path, digest string) v1.Image {
	t.Helper()
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := img.Digest(); err != nil || d.String() != digest {
		t.Errorf("tarball's digest %s (%v), stdout says %s", d, err, digest)
	}
	return img
}

func checkConfig(t *testing.T, img v1.Image, entrypoint []string, user string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, entrypoint) || cf.Config.User != user || cf.OS != "linux" {
		t.Errorf("config: entrypoint %q user %q os %s, want %q %q linux", cf.Config.Entrypoint, cf.Config.User, cf.OS, entrypoint, user)
	}
}

// layerFiles reads the image's one layer: each entry's name and content.
func layerFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRunsAsLlmload runs the image's binary: it is llmload of the
// version asked for, and it runs with no libc to load.
func checkRunsAsLlmload(t *testing.T, bin []byte, version string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "llmload")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if want := "llmload " + version + "\n"; err != nil || string(out) != want {
		t.Errorf("the image's llmload version: %q, %v; want %q", out, err, want)
	}
}
