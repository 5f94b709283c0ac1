package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// module is the go.mod line that marks the repository's root.
var module = regexp.MustCompile(`(?m)^module\s+github\.com/llmload/llmload\s*$`)

// checkRepoRoot makes sure ./cmd/llmload is llmload's own source: the
// current directory holds the module's go.mod.
func checkRepoRoot() error {
	b, err := os.ReadFile("go.mod")
	if err != nil || !module.Match(b) {
		return usagef("--binary PATH is required outside the llmload repository's root (no go.mod of github.com/llmload/llmload here to build ./cmd/llmload from)")
	}
	return nil
}

// buildLlmload builds ./cmd/llmload into dir as deploy/Dockerfile does:
// static, trimmed, stripped, no VCS stamp (the Docker context has no
// .git), the version set when one is given.
func buildLlmload(ctx context.Context, dir, platform, version string, stderr io.Writer) (string, error) {
	goos, goarch, _ := strings.Cut(platform, "/")
	out := filepath.Join(dir, "llmload")
	ldflags := "-s -w"
	if version != "" {
		ldflags += " -X main.version=" + version
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags="+ldflags, "-o", out, "./cmd/llmload")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	fmt.Fprintf(stderr, "building ./cmd/llmload (CGO_ENABLED=0 GOOS=%s GOARCH=%s go build -trimpath -ldflags=%q)\n", goos, goarch, ldflags)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/llmload: %w", err)
	}
	return out, nil
}
