// Package ociimage builds a single-layer container image from files on
// disk — a static binary and, optionally, a CA bundle on an empty base,
// as deploy/Dockerfile's final stage does — without a Docker engine, and
// writes it as a docker-archive tarball or pushes it to a registry.
//
// The same inputs give the same image digest: the layer's entries are
// sorted, owned by 0:0, with fixed modes and the Unix epoch as their
// time, and the image's created time is the epoch too.
package ociimage

import (
	"fmt"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Defaults of the llmload image, as deploy/Dockerfile builds it.
const (
	// DefaultPath is where the llmload binary sits in its image, and its entrypoint.
	DefaultPath = "/llmload"
	// DefaultUser is the uid:gid the image runs as (distroless' nonroot; engine/kube's ImageUser).
	DefaultUser = "65532:65532"
	// CertsPath is where the CA bundle goes, the first path Go's crypto/x509 reads on Linux.
	CertsPath = "/etc/ssl/certs/ca-certificates.crt"
)

// epoch is every time in the image: its created time, its history's and
// its files', so that a rebuild of the same inputs has the same digest.
var epoch = time.Unix(0, 0).UTC()

// Spec says what goes into an image.
type Spec struct {
	Binary     string            // the static executable on disk; required
	Path       string            // where it goes in the image; default Entrypoint[0], which must name it
	Entrypoint []string          // exec form, e.g. ["/llmload"]; required, its first element absolute
	User       string            // numeric UID[:GID], e.g. DefaultUser; required (empty would mean root)
	Certs      string            // a PEM CA bundle on disk to put at CertsPath; "" for none
	Labels     map[string]string // config labels, e.g. org.opencontainers.image.version
	Env        []string          // KEY=VALUE; scratch needs no PATH
	Platform   string            // os/arch[/variant]; default linux/runtime.GOARCH
}

// Build reads the spec's files once, checks them, and returns the image.
// The image holds the files' bytes in memory, so a file changed after
// Build does not change what is written or pushed.
func Build(s Spec) (v1.Image, error) {
	c, err := s.check()
	if err != nil {
		return nil, err
	}
	files, err := s.files(c)
	if err != nil {
		return nil, err
	}
	layer, err := newLayer(files)
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: epoch}, CreatedBy: "ociimage: COPY binary " + c.path + certsHistory(s.Certs),
	}})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	return configure(img, s, c)
}

func certsHistory(certs string) string {
	if certs == "" {
		return ""
	}
	return ", CA bundle " + CertsPath
}

// configure sets the image's config: what runs, as whom, on what.
func configure(img v1.Image, s Spec, c checked) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: epoch}
	cf.OS, cf.Architecture, cf.Variant = c.platform.OS, c.platform.Architecture, c.platform.Variant
	cf.Config = v1.Config{
		Entrypoint: append([]string(nil), s.Entrypoint...),
		User:       s.User,
		Env:        append([]string(nil), s.Env...),
		WorkingDir: "/",
		Labels:     copyLabels(s.Labels),
	}
	return mutate.ConfigFile(img, cf)
}

func copyLabels(l map[string]string) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

// defaultPlatform is the platform of an image whose spec names none.
func defaultPlatform() string { return "linux/" + runtime.GOARCH }
