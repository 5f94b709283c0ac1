package plan

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// CheckCACert reports why the file at path cannot be a target's TLS.CACert:
// unreadable, or holding no PEM certificate. It runs when a scenario is
// compiled and a flag is read, so that a typo stops `llmload check`, not
// the first request.
func CheckCACert(path string) error {
	data, err := readTLSFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data) {
		return fmt.Errorf("%s: holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return nil
}

// CheckPEMFile reports why the file at path cannot be one of a target's
// TLS files: unreadable, a directory, or not PEM.
func CheckPEMFile(path string) error {
	_, err := readTLSFile(path)
	return err
}

// CheckClientCert reports why certPath and keyPath, each a PEM file
// (CheckPEMFile), are not a certificate and the private key that matches
// it, as TLS.ClientCert and ClientKey must be. The error never quotes the
// key.
func CheckClientCert(certPath, keyPath string) error {
	cert, err := readTLSFile(certPath)
	if err != nil {
		return err
	}
	key, err := readTLSFile(keyPath)
	if err != nil {
		return err
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		return fmt.Errorf("%s and %s are not a certificate and its private key: %s", certPath, keyPath,
			strings.TrimPrefix(err.Error(), "tls: "))
	}
	return nil
}

// readTLSFile reads a certificate or key file, saying which file failed
// without Go's "open" prefix.
func readTLSFile(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a PEM file", path)
	}
	data, err := os.ReadFile(path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("%s: %w", path, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case !strings.Contains(string(data), "-----BEGIN "):
		return nil, fmt.Errorf("%s: not a PEM file (no -----BEGIN line; openssl converts DER to PEM)", path)
	}
	return data, nil
}
