package kube

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/ociimage"
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
	checkFinalStage(t, final[1:])
}

// checkFinalStage holds the final stage to the image cmd/llmload-image
// builds without Docker (engine/ociimage's defaults), and both to the
// pods' user: one image, however it is built.
func checkFinalStage(t *testing.T, final []string) {
	t.Helper()
	var user, entry, binary, certs string
	for _, ins := range final {
		switch {
		case strings.HasPrefix(ins, "RUN "):
			t.Errorf("the final stage runs %q: scratch has no shell", ins)
		case strings.HasPrefix(ins, "USER "):
			user = strings.TrimPrefix(ins, "USER ")
		case strings.HasPrefix(ins, "ENTRYPOINT "):
			entry = strings.TrimPrefix(ins, "ENTRYPOINT ")
		case strings.HasPrefix(ins, "COPY --from=build /etc/ssl/certs/ca-certificates.crt "):
			certs = strings.TrimPrefix(ins, "COPY --from=build /etc/ssl/certs/ca-certificates.crt ")
		case strings.HasPrefix(ins, "COPY --from=build /out/llmload "):
			binary = strings.TrimPrefix(ins, "COPY --from=build /out/llmload ")
		}
	}
	uid, _, _ := strings.Cut(ociimage.DefaultUser, ":")
	if user != ociimage.DefaultUser || uid != strconv.FormatInt(ImageUser, 10) || ImageUser != 65532 {
		t.Errorf("USER %q, want ociimage.DefaultUser %s, whose uid is engine/kube's ImageUser %d", user, ociimage.DefaultUser, ImageUser)
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) != 1 || argv[0] != ociimage.DefaultPath {
		t.Errorf("ENTRYPOINT %s, want the exec form [%q] (ociimage.DefaultPath)", entry, ociimage.DefaultPath)
	}
	if binary != ociimage.DefaultPath {
		t.Errorf("the binary is copied to %q, want ociimage.DefaultPath %s", binary, ociimage.DefaultPath)
	}
	if certs != ociimage.CertsPath {
		t.Errorf("the CA certificates are copied to %q, want ociimage.CertsPath %s", certs, ociimage.CertsPath)
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
