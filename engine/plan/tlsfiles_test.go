package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/tlstest"
)

// writePair writes a certificate of a CA of its own and its key as PEM
// files in dir, named name.pem and name-key.pem.
func writePair(t *testing.T, dir, name string) (cert, key string) {
	t.Helper()
	return tlstest.NewCA(t, name).Issue(t, tlstest.Leaf{CommonName: name, Client: true}).Write(t, dir, name)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTLSFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePair(t, dir, "a")
	_, otherKey := writePair(t, dir, "b")
	der := filepath.Join(dir, "ca.der")
	writeFile(t, der, "\x30\x82binary")
	keyOnly := filepath.Join(dir, "key-only.pem")
	writeFile(t, keyOnly, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name string
		err  error
		want string // a part of the error; "" for none
	}{
		{"ca", CheckCACert(cert), ""},
		{"ca missing", CheckCACert(missing), missing + ": no such file or directory"},
		{"ca a directory", CheckCACert(dir), dir + ": is a directory, not a PEM file"},
		{"ca DER", CheckCACert(der), der + ": not a PEM file"},
		{"ca without a certificate", CheckCACert(keyOnly), keyOnly + ": holds no PEM certificate"},
		{"pem file", CheckPEMFile(key), ""},
		{"pem missing", CheckPEMFile(missing), "no such file or directory"},
		{"pair", CheckClientCert(cert, key), ""},
		{"pair mismatched", CheckClientCert(cert, otherKey), cert + " and " + otherKey + " are not a certificate and its private key: private key does not match public key"},
		{"pair swapped", CheckClientCert(key, cert), "are not a certificate and its private key"},
		{"pair key missing", CheckClientCert(cert, missing), missing + ": no such file or directory"},
	}
	for _, tt := range tests {
		switch {
		case tt.want == "" && tt.err != nil:
			t.Errorf("%s: %v, want nil", tt.name, tt.err)
		case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error containing %q", tt.name, tt.err, tt.want)
		}
	}
	keyPEM, err := os.ReadFile(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Split(string(keyPEM), "\n")[1]
	if err := CheckClientCert(cert, otherKey); err == nil || strings.Contains(err.Error(), body) {
		t.Errorf("CheckClientCert quotes the key: %v", err)
	}
}
