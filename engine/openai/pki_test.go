package openai

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a certificate authority made for one test: the certificates
// it signs, and their PEM files in the test's temporary directory.
type testPKI struct {
	t      testing.TB
	dir    string
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	CAFile string // the CA's certificate, PEM
	serial int64
}

func newPKI(t testing.TB, name string) *testPKI {
	t.Helper()
	p := &testPKI{t: t, dir: t.TempDir()}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:  x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	p.cert, p.key = p.sign(tmpl, nil, nil)
	p.CAFile = p.write(name+"-ca.pem", pemBlock("CERTIFICATE", p.cert.Raw))
	return p
}

// sign makes a certificate from tmpl with a fresh key, signed by parent
// (self-signed when nil).
func (p *testPKI) sign(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	tmpl.SerialNumber = big.NewInt(p.serial)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		p.t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		p.t.Fatal(err)
	}
	return cert, key
}

// leaf is a certificate the CA signs for names (IP addresses or DNS
// names), valid from notBefore to notAfter.
func (p *testPKI) leaf(usage x509.ExtKeyUsage, notBefore, notAfter time.Time, names ...string) (*x509.Certificate, *ecdsa.PrivateKey) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: "leaf"}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return p.sign(tmpl, p.cert, p.key)
}

// server is a serving certificate for names, valid now.
func (p *testPKI) server(names ...string) tls.Certificate {
	cert, key := p.leaf(x509.ExtKeyUsageServerAuth, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), names...)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// client writes a client certificate valid from notBefore to notAfter
// and its key, and returns their files.
func (p *testPKI) client(name string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	cert, key := p.leaf(x509.ExtKeyUsageClientAuth, notBefore, notAfter)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.write(name+".pem", pemBlock("CERTIFICATE", cert.Raw)), p.write(name+"-key.pem", pemBlock("PRIVATE KEY", der))
}

// validClient is a client certificate valid now.
func (p *testPKI) validClient(name string) (certFile, keyFile string) {
	return p.client(name, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
}

// pool holds the CA alone.
func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.cert)
	return pool
}

func (p *testPKI) write(name string, data []byte) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// serveTLS starts a loopback HTTPS server for h with conf's certificate
// and client authentication; h2 offers HTTP/2 by ALPN. The server's
// handshake errors, expected in these tests, are not logged; edit may
// configure it before it starts.
func serveTLS(t testing.TB, h http.Handler, conf *tls.Config, h2 bool, edit ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.TLS = conf
	srv.EnableHTTP2 = h2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	for _, e := range edit {
		e(srv.Config)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
