// Command llmload-image builds llmload's container image without a
// Docker engine: the static binary (built here when run from the
// repository's root) and a CA bundle on an empty base, as deploy/Dockerfile
// does, written as a tarball that 'docker load' and 'ctr images import'
// read, or pushed to a registry. It packs any other static binary too,
// such as the Kubernetes pause binary of the test cluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/llmload/llmload/engine/ociimage"
)

// Exit codes, as llmload's.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `Usage: llmload-image --out FILE.tar [flags]
       llmload-image --push REGISTRY/REPOSITORY:TAG [flags]

Builds a single-layer image: the binary at the entrypoint's path, the CA
bundle at ` + ociimage.CertsPath + `, run as a numeric user, on an empty base
(deploy/Dockerfile's image, without Docker). The same inputs give the same
digest. Without --binary, and run from the repository's root, it builds
./cmd/llmload as the Dockerfile does (CGO_ENABLED=0 -trimpath -ldflags "-s -w"),
with --version as its VERSION.

  ctr -n k8s.io images import FILE.tar    # containerd, e.g. a kubelet's
  docker load -i FILE.tar

Flags:
`

// usageError is a command-line mistake: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp means --help was asked for and printed: exit 0.
var errHelp = errors.New("help requested")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run builds the image the flags describe and maps the outcome to an
// exit code; an interrupt cancels a build or a push under way.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := imageCmd(ctx, args, stdout, stderr)
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "llmload-image: %v\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "llmload-image: %v\n", err)
		return exitError
	}
}

// imageCmd checks the flags, builds the binary if asked to, then the
// image, and writes or pushes it.
func imageCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.binary == "" {
		dir, err := os.MkdirTemp("", "llmload-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if f.spec.Binary, err = buildLlmload(ctx, dir, f.platform, f.version, stderr); err != nil {
			return err
		}
	}
	img, err := ociimage.Build(f.spec)
	if err != nil {
		return err
	}
	return deliver(ctx, f, img, stdout)
}

// sizeText formats an image's size for its summary line: "12.3 MB".
func sizeText(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// splitKV reads KEY=VALUE flag values into a map, naming the flag.
func splitKV(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--%s %q: want KEY=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}
