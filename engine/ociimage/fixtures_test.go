package ociimage

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The fixtures every test reads: two static Go programs that differ in
// one string, a CA bundle, a dynamically linked system binary.
var (
	staticA, staticB string
	certsA, certsB   string
)

// dynamicBinary is dynamically linked on Debian (PT_INTERP ld-linux).
const dynamicBinary = "/usr/bin/true"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ociimage-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = makeFixtures(dir)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "fixtures:", err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func makeFixtures(dir string) error {
	var err error
	if staticA, err = buildStatic(dir, "a", runtime.GOARCH); err != nil {
		return err
	}
	if staticB, err = buildStatic(dir, "b", runtime.GOARCH); err != nil {
		return err
	}
	if certsA, err = writeCA(dir, "a"); err != nil {
		return err
	}
	certsB, err = writeCA(dir, "b")
	return err
}

// buildStatic compiles a tiny main that prints word, with cgo off, as
// the images' binaries are built.
func buildStatic(dir, word, goarch string) (string, error) {
	src := filepath.Join(dir, "src-"+word)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	main := fmt.Sprintf("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(%q) }\n", word)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module fixture\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(main), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "static-"+word+"-"+goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", word, err, b)
	}
	return out, nil
}

// writeCA writes a PEM bundle of one self-signed CA certificate.
func writeCA(dir, cn string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "ca-"+cn+".pem")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// llmloadSpec is the spec of the llmload image, with a fixture binary.
func llmloadSpec() Spec {
	return Spec{Binary: staticA, Entrypoint: []string{DefaultPath}, User: DefaultUser, Certs: certsA}
}

// otherArch is an architecture that is not this machine's.
func otherArch() string {
	if runtime.GOARCH == "arm64" {
		return "amd64"
	}
	return "arm64"
}

// writeFile writes a fixture file in a test's own directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
