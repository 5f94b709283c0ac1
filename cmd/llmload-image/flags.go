package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmload/llmload/engine/ociimage"
)

// DefaultName is the image's name when --name is not given: a local
// name, which a kubelet finds after 'ctr -n k8s.io images import'.
const DefaultName = "localhost/llmload:dev"

// flags are the parsed and checked flags.
type flags struct {
	spec     ociimage.Spec
	binary   string // --binary as given; "" builds ./cmd/llmload
	version  string // -X main.version of that build; "" keeps the source's
	platform string // GOOS/GOARCH of that build
	out      string
	name     string
	push     string
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	var entrypoint, certs string
	var noCerts bool
	var labels []string
	fs := pflag.NewFlagSet("llmload-image", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage+fs.FlagUsages()) }
	fs.StringVar(&f.out, "out", "", "write the image as a docker-archive tarball to FILE")
	fs.StringVar(&f.name, "name", DefaultName, "the image's name and tag in the tarball")
	fs.StringVar(&f.push, "push", "", "push the image to REGISTRY/REPOSITORY:TAG, with the Docker config's credentials")
	fs.StringVar(&f.binary, "binary", "", "the static executable to pack (default: build ./cmd/llmload, from the repository's root only)")
	fs.StringVar(&f.version, "version", "", "the version built into ./cmd/llmload (-X main.version, as the Dockerfile's VERSION); not with --binary")
	fs.StringVar(&entrypoint, "entrypoint", ociimage.DefaultPath, "the program the image runs; the binary is put at this path")
	fs.StringVar(&f.spec.User, "user", ociimage.DefaultUser, "numeric UID[:GID] the image runs as")
	fs.StringVar(&certs, "certs", "", "CA bundle to put at "+ociimage.CertsPath+" (default: this machine's "+ociimage.CertsPath+")")
	fs.BoolVar(&noCerts, "no-certs", false, "no CA bundle: for a binary that makes no TLS connections")
	fs.StringVar(&f.spec.Platform, "platform", "", "os/arch of the image and of the build (default linux/"+runtime.GOARCH+")")
	fs.StringArrayVar(&labels, "label", nil, "KEY=VALUE config label, e.g. org.opencontainers.image.version=0.1.0 (repeatable)")
	fs.StringArrayVar(&f.spec.Env, "env", nil, "KEY=VALUE environment variable of the image (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errHelp
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q: every input is a flag (--binary, --out ...)", fs.Arg(0))
	}
	f.spec.Entrypoint = []string{entrypoint}
	var err error
	if f.spec.Labels, err = splitKV("label", labels); err != nil {
		return nil, err
	}
	if f.spec.Certs, err = certsFlag(certs, noCerts, fs.Changed("certs")); err != nil {
		return nil, err
	}
	return &f, f.check()
}

// certsFlag resolves --certs and --no-certs: this machine's bundle
// when neither is given, and an error, not an image that cannot verify
// any TLS server, when it has none.
func certsFlag(certs string, noCerts, changed bool) (string, error) {
	switch {
	case noCerts && changed:
		return "", usagef("--certs and --no-certs: pass one")
	case noCerts:
		return "", nil
	case changed && certs == "":
		return "", usagef("--certs \"\": pass a CA bundle, or --no-certs for none")
	case changed:
		return certs, nil
	}
	if _, err := os.Stat(ociimage.CertsPath); err != nil {
		return "", usagef("no CA bundle at %s on this machine: pass --certs FILE, or --no-certs for an image that makes no TLS connections", ociimage.CertsPath)
	}
	return ociimage.CertsPath, nil
}

// check refuses bad flags before anything is built; a missing or bad
// file is found by ociimage.Build, after.
func (f *flags) check() error {
	if f.out == "" && f.push == "" {
		return usagef("--out FILE.tar or --push REF is required: where the image goes")
	}
	if _, err := ociimage.ParseTag(f.name); err != nil {
		return usagef("--name: %v", err)
	}
	if f.push != "" {
		if _, err := ociimage.ParseTag(f.push); err != nil {
			return usagef("--push: %v", err)
		}
	}
	if f.out != "" {
		if st, err := os.Stat(f.out); err == nil && st.IsDir() {
			return usagef("--out %s is a directory: name the tarball's file", f.out)
		}
	}
	return f.checkSpec()
}

// checkSpec validates the image's fields; without --binary it first
// makes sure ./cmd/llmload can be built here.
func (f *flags) checkSpec() error {
	p, err := ociimage.ParsePlatform(f.spec.Platform)
	if err != nil {
		return usagef("%v", err)
	}
	f.platform = p.OS + "/" + p.Architecture
	f.spec.Binary = f.binary
	if f.binary != "" && f.version != "" {
		return usagef("--version is the version of the llmload this command builds: not with --binary")
	}
	if strings.ContainsAny(f.version, " \t\n'\"") {
		return usagef("--version %q: no spaces or quotes", f.version)
	}
	if f.binary == "" {
		if err := checkRepoRoot(); err != nil {
			return err
		}
		f.spec.Binary = filepath.Join(os.TempDir(), "llmload") // a placeholder: Validate reads no file
	}
	if err := f.spec.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}
