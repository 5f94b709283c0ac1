package ociimage

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// checked is what checking a spec worked out.
type checked struct {
	path     string // the binary's path in the image
	platform v1.Platform
}

// Validate checks the spec's fields without reading its files, so that
// a caller can refuse bad flags before building the binary; Build checks
// the files too. Each error names the field.
func (s Spec) Validate() error {
	_, err := s.check()
	return err
}

// check validates the spec's fields before any file is read.
func (s Spec) check() (checked, error) {
	var c checked
	if s.Binary == "" {
		return c, errors.New("binary: required: the path of a static executable")
	}
	if err := checkEntrypoint(s.Entrypoint); err != nil {
		return c, err
	}
	p, err := s.imagePath()
	if err != nil {
		return c, err
	}
	c.path = p
	if err := checkUser(s.User); err != nil {
		return c, err
	}
	if err := checkEnv(s.Env); err != nil {
		return c, err
	}
	if err := checkLabels(s.Labels); err != nil {
		return c, err
	}
	c.platform, err = ParsePlatform(s.Platform)
	return c, err
}

func checkEntrypoint(argv []string) error {
	switch {
	case len(argv) == 0:
		return errors.New("entrypoint: required: the exec form, e.g. [\"/llmload\"]")
	case !path.IsAbs(argv[0]):
		return fmt.Errorf("entrypoint: %q is not an absolute path: the image has no shell and no PATH to search", argv[0])
	}
	return nil
}

// imagePath is the binary's path in the image: Path, or the entrypoint's
// program. The two must agree: a scratch image holds nothing else to run.
func (s Spec) imagePath() (string, error) {
	p := s.Path
	if p == "" {
		p = s.Entrypoint[0]
	}
	switch {
	case !path.IsAbs(p) || path.Clean(p) != p || p == "/":
		return "", fmt.Errorf("path: %q is not a clean absolute file path, e.g. /llmload", p)
	case p != s.Entrypoint[0]:
		return "", fmt.Errorf("entrypoint: %q is not in the image: the binary is at %q (path) and nothing else can run on an empty base", s.Entrypoint[0], p)
	case s.Certs != "" && (p == CertsPath || strings.HasPrefix(CertsPath, p+"/")):
		return "", fmt.Errorf("path: %q collides with the CA bundle at %s", p, CertsPath)
	}
	return p, nil
}

// checkUser accepts a numeric UID or UID:GID: a name would need an
// /etc/passwd, which an image built from scratch does not have.
func checkUser(u string) error {
	if u == "" {
		return fmt.Errorf("user: required: a numeric UID[:GID], e.g. %s (an empty user runs as root)", DefaultUser)
	}
	uid, gid, hasGID := strings.Cut(u, ":")
	if !numericID(uid) || (hasGID && !numericID(gid)) {
		return fmt.Errorf("user: %q is not a numeric UID[:GID], e.g. %s: the image has no /etc/passwd to look a name up in", u, DefaultUser)
	}
	return nil
}

// numericID reports whether s is a decimal uid or gid below 2^32-1 (the
// kernel's "no id").
func numericID(s string) bool {
	n, err := strconv.ParseUint(s, 10, 32)
	return err == nil && n < 1<<32-1 && s == strconv.FormatUint(n, 10)
}

func checkEnv(env []string) error {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return fmt.Errorf("env: %q is not KEY=VALUE", kv)
		}
	}
	return nil
}

func checkLabels(labels map[string]string) error {
	for k := range labels {
		if k == "" || strings.ContainsAny(k, " \t\n=") {
			return fmt.Errorf("labels: %q is not a label key, e.g. org.opencontainers.image.version", k)
		}
	}
	return nil
}

// ParsePlatform reads os/arch[/variant], "" for linux/runtime.GOARCH:
// Linux only, for an architecture whose ELF machine a binary can be
// checked against.
func ParsePlatform(s string) (v1.Platform, error) {
	if s == "" {
		s = defaultPlatform()
	}
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" || strings.Contains(s, ":") {
		return v1.Platform{}, fmt.Errorf("platform: %q is not os/arch[/variant], e.g. linux/amd64", s)
	}
	if p.OS != "linux" {
		return v1.Platform{}, fmt.Errorf("platform: %q: only linux images can be built (an ELF binary on an empty base)", s)
	}
	if _, ok := machines[p.Architecture]; !ok {
		return v1.Platform{}, fmt.Errorf("platform: architecture %q is not one of %s", p.Architecture, strings.Join(architectures(), ", "))
	}
	return *p, nil
}
