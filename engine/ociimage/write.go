package ociimage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ParseTag checks an image name with an explicit tag, such as
// localhost/llmload:dev or registry.example.com/llmload:0.1.0. A name
// without a registry host is kept as given in a tarball (docker and
// containerd then read it as Docker Hub's); a missing tag is an error,
// not a silent ":latest".
func ParseTag(ref string) (name.Tag, error) {
	t, err := name.NewTag(ref, name.WeakValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%q is not an image name: want [registry/]repository:tag, the repository lowercase (%v)", ref, err)
	}
	last := ref[strings.LastIndexByte(ref, '/')+1:]
	if !strings.Contains(last, ":") {
		return name.Tag{}, fmt.Errorf("%q has no tag: want [registry/]repository:tag, e.g. %s:dev", ref, ref)
	}
	return t, nil
}

// WriteTarball writes img to w as a docker-archive tarball tagged ref,
// which 'docker load' and 'ctr images import' both read.
func WriteTarball(w io.Writer, img v1.Image, ref string) error {
	tag, err := ParseTag(ref)
	if err != nil {
		return err
	}
	return tarball.Write(tag, img, w)
}

// WriteTarballFile writes the tarball to a temporary file beside path
// and renames it into place, so path is never left half-written.
func WriteTarballFile(path string, img v1.Image, ref string) (err error) {
	if _, err := ParseTag(ref); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("out: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := WriteTarball(tmp, img, ref); err != nil {
		return fmt.Errorf("out %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("out %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("out %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	return nil
}

// Push uploads img to the registry ref names, with the credentials of
// the Docker config (~/.docker/config.json, $DOCKER_CONFIG, its
// credential helpers), anonymously when it has none. localhost,
// loopback and private addresses are reached over plain HTTP.
func Push(ctx context.Context, img v1.Image, ref string) error {
	tag, err := ParseTag(ref)
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// Size is what moves when the image is pulled: its manifest, its config
// and its compressed layers.
func Size(img v1.Image) (int64, error) {
	total, err := img.Size()
	if err != nil {
		return 0, err
	}
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	total += m.Config.Size
	for _, l := range m.Layers {
		total += l.Size
	}
	return total, nil
}
