package openai

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// TLSConfig is the TLS configuration a client of t uses, for another
// client of the same server (its /metrics); nil for the zero value.
func TLSConfig(t plan.TLS) (*tls.Config, error) { return tlsConfig(t, time.Now()) }

// tlsConfig is the client's TLS configuration from t, its files read and
// checked at now; nil when t is the zero value (the system's roots and
// full verification). Each error starts with the option it is about.
func tlsConfig(t plan.TLS, now time.Time) (*tls.Config, error) {
	if t == (plan.TLS{}) {
		return nil, nil
	}
	if err := checkServerName(t.ServerName); err != nil {
		return nil, err
	}
	conf := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CACert != "" {
		roots, err := loadRoots(t.CACert)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = roots
	}
	cert, err := loadClientCert(t.ClientCert, t.ClientKey, now)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		// Sent whatever CAs the server names: by default Go sends none
		// that the server's list does not match, and the server's
		// "certificate required" would hide which certificate it refused.
		conf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return conf, nil
}

// checkServerName accepts a DNS name or an IP address ("" is unset).
func checkServerName(name string) error {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._:*", r)) {
			return fmt.Errorf("server_name: %q is not a host name: it has %q (write the name alone, without scheme, port or path)", name, r)
		}
	}
	return nil
}

// pemFile reads the PEM blocks of a file named by option.
func pemFile(option, path string) ([]*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read %s: %v", option, path, err)
	}
	var blocks []*pem.Block
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: %s is not a PEM file (no -----BEGIN ...----- block); a DER file converts with openssl x509 -inform der", option, path)
	}
	return blocks, nil
}

// blockTypes lists the types of blocks, for an error saying what a file
// held instead.
func blockTypes(blocks []*pem.Block) string {
	var types []string
	for _, b := range blocks {
		if !slices.Contains(types, b.Type) {
			types = append(types, b.Type)
		}
	}
	return strings.Join(types, ", ")
}

// loadRoots reads a CA bundle: every certificate must parse, and there
// must be one (x509's AppendCertsFromPEM skips both silently).
func loadRoots(path string) (*x509.CertPool, error) {
	blocks, err := pemFile("ca_cert", path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for _, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("ca_cert: certificate %d of %s does not parse: %v", n, path, err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, fmt.Errorf("ca_cert: %s holds no certificate (only %s)", path, blockTypes(blocks))
	}
	return pool, nil
}

// loadClientCert reads the certificate and key of mutual TLS; nil when
// neither is set. The pair must match, and the certificate be valid at
// now: a server would refuse it with a bare "bad certificate".
func loadClientCert(certPath, keyPath string, now time.Time) (*tls.Certificate, error) {
	switch {
	case certPath == "" && keyPath == "":
		return nil, nil
	case keyPath == "":
		return nil, errors.New("client_cert: set client_key too: a client certificate is sent with its private key")
	case certPath == "":
		return nil, errors.New("client_key: set client_cert too: a private key alone proves nothing to the server")
	}
	certPEM, err := pemOf("client_cert", certPath, func(t string) bool { return t == "CERTIFICATE" }, "certificate")
	if err != nil {
		return nil, err
	}
	keyPEM, err := pemOf("client_key", keyPath, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }, "private key")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	switch {
	case err != nil && strings.Contains(err.Error(), "does not match"):
		return nil, fmt.Errorf("client_key: %s is not the key of the certificate in client_cert %s", keyPath, certPath)
	case err != nil:
		return nil, fmt.Errorf("client_key: %s with client_cert %s: %v (an encrypted key must be decrypted first)", keyPath, certPath,
			strings.TrimPrefix(err.Error(), "tls: "))
	}
	return &pair, checkValidity(certPath, pair.Leaf, now)
}

// pemOf reads a PEM file that must hold a block of a type want accepts,
// named what in the error; it returns the file's PEM text.
func pemOf(option, path string, want func(string) bool, what string) ([]byte, error) {
	blocks, err := pemFile(option, path)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(blocks, func(b *pem.Block) bool { return want(b.Type) }) {
		return nil, fmt.Errorf("%s: %s holds no %s (only %s)", option, path, what, blockTypes(blocks))
	}
	var out []byte
	for _, b := range blocks {
		out = append(out, pem.EncodeToMemory(b)...)
	}
	return out, nil
}

// checkValidity refuses a client certificate outside its validity at now.
func checkValidity(path string, leaf *x509.Certificate, now time.Time) error {
	const layout = "2006-01-02 15:04:05 MST"
	switch {
	case leaf == nil:
		return nil
	case now.After(leaf.NotAfter):
		return fmt.Errorf("client_cert: %s expired on %s (its NotAfter); renew it", path, leaf.NotAfter.UTC().Format(layout))
	case now.Before(leaf.NotBefore):
		return fmt.Errorf("client_cert: %s is not valid before %s (its NotBefore); is this machine's clock right?",
			path, leaf.NotBefore.UTC().Format(layout))
	}
	return nil
}
