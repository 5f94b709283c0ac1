package tlstest

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

// TestChains: a server and a client certificate verify against their CA
// and not against another; an expired one does not verify.
func TestChains(t *testing.T) {
	ca, other := NewCA(t, "test CA"), NewCA(t, "other CA")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	for _, tc := range []struct {
		name  string
		pair  Pair
		usage x509.ExtKeyUsage
		want  string // "" verifies
	}{
		{"server", ca.Server(t), x509.ExtKeyUsageServerAuth, ""},
		{"client", ca.Issue(t, Leaf{CommonName: "llmload", Client: true}), x509.ExtKeyUsageClientAuth, ""},
		{"another CA's", other.Server(t), x509.ExtKeyUsageServerAuth, "unknown authority"},
		{"expired", ca.Issue(t, Leaf{CommonName: "old", Client: true, NotBefore: time.Now().Add(-48 * time.Hour),
			NotAfter: time.Now().Add(-24 * time.Hour)}), x509.ExtKeyUsageClientAuth, "expired"},
	} {
		pair, err := tls.X509KeyPair(tc.pair.CertPEM, tc.pair.KeyPEM)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{tc.usage}})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: verify: %v, want %q", tc.name, err, tc.want)
		}
	}
}
