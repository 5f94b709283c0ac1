package ociimage

import (
	"archive/tar"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPush pushes to go-containerregistry's own registry on loopback and
// pulls the image back whole.
func TestPush(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine's
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	img, err := Build(llmloadSpec())
	if err != nil {
		t.Fatal(err)
	}
	ref := strings.TrimPrefix(srv.URL, "http://") + "/llmload:test"
	if err := Push(context.Background(), img, ref); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustDigest(t, pulled), mustDigest(t, img); got != want {
		t.Errorf("pulled %s, pushed %s", got, want)
	}
	checkConfig(t, pulled, llmloadSpec())
	checkFiles(t, pulled, []entry{
		{"etc/", tar.TypeDir, 0o755, nil}, {"etc/ssl/", tar.TypeDir, 0o755, nil}, {"etc/ssl/certs/", tar.TypeDir, 0o755, nil},
		{"etc/ssl/certs/ca-certificates.crt", tar.TypeReg, 0o644, mustRead(t, certsA)}, {"llmload", tar.TypeReg, 0o755, mustRead(t, staticA)},
	})
}

// TestPushErrors: a bad name, a registry that is not there, a canceled push.
func TestPushErrors(t *testing.T) {
	img, err := Build(llmloadSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(context.Background(), img, "127.0.0.1:1/llmload"); err == nil || !strings.Contains(err.Error(), "has no tag") {
		t.Errorf("no tag: %v", err)
	}
	if err := Push(context.Background(), img, "127.0.0.1:1/llmload:dev"); err == nil || !strings.Contains(err.Error(), "push 127.0.0.1:1/llmload:dev: ") {
		t.Errorf("no registry: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	if err := Push(ctx, img, strings.TrimPrefix(srv.URL, "http://")+"/llmload:dev"); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("canceled: %v", err)
	}
}

// TestSize counts the manifest, the config and the compressed layer.
func TestSize(t *testing.T) {
	img, err := Build(llmloadSpec())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Size(img)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := img.Layers()
	ls, _ := l[0].Size()
	raw, _ := img.RawManifest()
	cfg, _ := img.RawConfigFile()
	if want := ls + int64(len(raw)+len(cfg)); got != want {
		t.Errorf("Size %d, want %d", got, want)
	}
}
