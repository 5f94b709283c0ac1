package kube

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dockerfile is deploy/Dockerfile split into its stages' instructions,
// continuation lines joined and comments dropped.
func dockerfile(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]string
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], line)
	}
	return stages
}

// TestDockerfile checks the image's essentials without building it (no
// registry for base images is reachable from the tests).
func TestDockerfile(t *testing.T) {
	stages := dockerfile(t)
	if len(stages) != 2 {
		t.Fatalf("%d stages, want a builder and a final stage", len(stages))
	}
	build, final := strings.Join(stages[0], "\n"), stages[1]
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags="-s -w`, "go build", "./cmd/llmload"} {
		if !strings.Contains(build, want) {
			t.Errorf("the builder does not %s", want)
		}
	}
	checkGoVersion(t, stages[0][0])
	if final[0] != "FROM scratch" {
		t.Errorf("final stage %q, want FROM scratch", final[0])
	}
	var user, entry string
	certs := false
	for _, ins := range final[1:] {
		switch {
		case strings.HasPrefix(ins, "RUN "):
			t.Errorf("the final stage runs %q: scratch has no shell", ins)
		case strings.HasPrefix(ins, "USER "):
			user = strings.TrimPrefix(ins, "USER ")
		case strings.HasPrefix(ins, "ENTRYPOINT "):
			entry = strings.TrimPrefix(ins, "ENTRYPOINT ")
		case strings.HasPrefix(ins, "COPY --from=build /etc/ssl/certs/ca-certificates.crt "):
			certs = true
		}
	}
	if want := "65532:65532"; user != want || ImageUser != 65532 {
		t.Errorf("USER %q, want %s (engine/kube's ImageUser %d)", user, want, ImageUser)
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) != 1 || argv[0] != "/llmload" {
		t.Errorf("ENTRYPOINT %s, want the exec form [\"/llmload\"]", entry)
	}
	if !certs {
		t.Error("the final stage does not copy the CA certificates from the builder")
	}
}

// checkGoVersion holds the builder's golang tag to go.mod's go line.
func checkGoVersion(t *testing.T, from string) {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	tag := regexp.MustCompile(`^FROM golang:(\d+\.\d+)\.\d+-\w+ AS build$`).FindStringSubmatch(from)
	if goLine == nil || tag == nil || tag[1] != string(goLine[1]) {
		t.Errorf("builder %q does not pin a golang release of go.mod's go %s", from, goLine[1])
	}
}
