package luabind

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/plan"
)

// writeCertPair writes a self-signed certificate and its key as PEM files
// dir/name.pem and dir/name-key.pem.
func writeCertPair(t *testing.T, dir, name string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	for file, block := range map[string]*pem.Block{
		name + ".pem":     {Type: "CERTIFICATE", Bytes: der},
		name + "-key.pem": {Type: "PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// targetDir is a directory with certs/a.pem, certs/a-key.pem and
// certs/b-key.pem (another pair's key), where a test writes its script.
func targetDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeCertPair(t, filepath.Join(dir, "certs"), "a")
	writeCertPair(t, filepath.Join(dir, "certs"), "b")
	return dir
}

// compileTarget compiles a script whose options.target is target, in dir.
func compileTarget(t *testing.T, dir, target string) (plan.Target, error) {
	t.Helper()
	path := filepath.Join(dir, "s.lua")
	src := "local llm = require('llmload')\noptions = { vus = 1, duration = '1s', target = " + target + " }\nfunction iteration() end\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Compile(path, Options{Env: func(name string) (string, bool) {
		if name == "TENANT_TOKEN" {
			return "tok-from-env", true
		}
		return "", false
	}})
	if err != nil {
		return plan.Target{}, err
	}
	return s.Plan().Target, nil
}

func TestOptionsTarget(t *testing.T) {
	dir := targetDir(t)
	certs := filepath.Join(dir, "certs")
	tests := []struct {
		name, target string
		want         func(*plan.Target)
	}{
		{"headers sorted", `{ headers = { ["X-Tenant"] = "acme", Authorization = "Basic abc", ["OpenAI-Organization"] = "org-1" } }`,
			func(t *plan.Target) {
				t.Headers = []plan.Header{{Name: "Authorization", Value: "Basic abc"}, {Name: "OpenAI-Organization", Value: "org-1"},
					{Name: "X-Tenant", Value: "acme"}}
			}},
		{"header from llm.env", `{ headers = { ["X-Tenant-Token"] = llm.env("TENANT_TOKEN"), ["X-Unset"] = llm.env("UNSET") } }`,
			func(t *plan.Target) { t.Headers = []plan.Header{{Name: "X-Tenant-Token", Value: "tok-from-env"}} }},
		{"query", `{ query = { ["api-version"] = "2024-10-21", deployment = "d" } }`,
			func(t *plan.Target) {
				t.Query = []plan.Header{{Name: "api-version", Value: "2024-10-21"}, {Name: "deployment", Value: "d"}}
			}},
		{"auth api-key", `{ auth = "api-key", api_key = "k" }`, func(t *plan.Target) { t.Auth, t.APIKey = plan.AuthAPIKey, "k" }},
		{"auth none", `{ auth = "none" }`, func(t *plan.Target) { t.Auth = plan.AuthNone }},
		{"auth header", `{ auth = "x-api-key", auth_header = "Ocp-Apim-Subscription-Key" }`,
			func(t *plan.Target) { t.Auth, t.AuthHeader = plan.AuthXAPIKey, "Ocp-Apim-Subscription-Key" }},
		{"a header beside the key's own", `{ api_key = "k", auth = "api-key", headers = { Authorization = "Bearer gw" } }`,
			func(t *plan.Target) {
				t.APIKey, t.Auth, t.Headers = "k", plan.AuthAPIKey, []plan.Header{{Name: "Authorization", Value: "Bearer gw"}}
			}},
		{"tls relative to the script", `{ base_url = "https://h/v1", ca_cert = "certs/a.pem", client_cert = "certs/a.pem", client_key = "certs/a-key.pem", server_name = "llm.internal", insecure_skip_verify = true }`,
			func(t *plan.Target) {
				t.BaseURL = "https://h/v1"
				t.TLS = plan.TLS{CACert: filepath.Join(certs, "a.pem"), ClientCert: filepath.Join(certs, "a.pem"),
					ClientKey: filepath.Join(certs, "a-key.pem"), ServerName: "llm.internal", InsecureSkipVerify: true}
			}},
		{"tls absolute", `{ ca_cert = "` + filepath.Join(certs, "b.pem") + `" }`,
			func(t *plan.Target) { t.TLS.CACert = filepath.Join(certs, "b.pem") }},
		{"http2", `{ base_url = "https://h/v1", http2 = true }`, func(t *plan.Target) { t.BaseURL, t.HTTP2 = "https://h/v1", true }},
		{"h2c", `{ base_url = "http://h/v1", h2c = true, http2 = true }`,
			func(t *plan.Target) { t.BaseURL, t.H2C, t.HTTP2 = "http://h/v1", true, true }},
		{"http2 on the simulator", `{ http2 = true }`, func(t *plan.Target) { t.HTTP2 = true }},
		{"no metrics", `{ metrics_url = false }`, func(t *plan.Target) { t.NoMetrics = true }},
		{"metrics url", `{ metrics_url = "http://h:8000/metrics" }`, func(t *plan.Target) { t.MetricsURL = "http://h:8000/metrics" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compileTarget(t, dir, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			want := plan.Target{Tokenizer: plan.DefaultTokenizer}
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("target =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestOptionsTargetErrors(t *testing.T) {
	dir := targetDir(t)
	certs := filepath.Join(dir, "certs")
	tests := []struct {
		name, target, want string
	}{
		{"header name", `{ headers = { ["X Tenant"] = "acme" } }`,
			`options.target.headers["X Tenant"]: the name holds a space at position 2: a header name is a token`},
		{"header value", `{ headers = { ["X-Api-Key"] = "sk-hidden\nX-Evil: 1" } }`,
			`options.target.headers["X-Api-Key"]: the value holds a line feed (LF) at position 10`},
		{"header owned", `{ headers = { ["Content-Length"] = "5" } }`,
			`options.target.headers["Content-Length"]: llmload sets Content-Length from the body it sends`},
		{"header number", `{ headers = { ["X-Priority"] = 5 } }`,
			`options.target.headers["X-Priority"]: expected string, got number (a header value is text: write it in quotes)`},
		{"header table", `{ headers = { ["X-Priority"] = {} } }`, `options.target.headers["X-Priority"]: expected string, got table`},
		{"header twice", `{ headers = { ["X-Tenant"] = "a", ["x-tenant"] = "b" } }`,
			`options.target.headers["x-tenant"]: the same header as ["X-Tenant"] (header names are case-insensitive)`},
		{"headers a string", `{ headers = "X-Tenant: a" }`, "options.target.headers: expected a table of header names to values, got string"},
		{"query number", `{ query = { ["api-version"] = 2024 } }`,
			`options.target.query["api-version"]: expected string, got number (a query value is text: write it in quotes)`},
		{"query list", `{ query = { "api-version=1" } }`, "options.target.query[1]: parameter names are non-empty strings"},
		{"query empty name", `{ query = { [""] = "1" } }`, "options.target.query.: parameter names are non-empty strings"},
		{"auth typo", `{ auth = "apikey" }`, `options.target.auth: "apikey": want bearer, api-key, x-api-key or none (did you mean api-key?)`},
		{"auth far", `{ auth = "oauth2-client-credentials" }`, `options.target.auth: "oauth2-client-credentials": want bearer, api-key, x-api-key or none`},
		{"auth not a string", `{ auth = true }`, "options.target.auth: expected string, got boolean"},
		{"auth_header bad", `{ auth_header = "X Key" }`, `options.target.auth_header: "X Key": the name holds a space at position 2`},
		{"auth_header owned", `{ auth_header = "Host" }`, `options.target.auth_header: "Host": llmload sets Host`},
		{"auth_header with none", `{ auth = "none", auth_header = "X-Key" }`,
			`options.target.auth_header: has no effect with auth = "none", which sends no key`},
		{"key sent twice", `{ api_key = "sk-hidden", headers = { authorization = "Bearer other" } }`,
			`options.target.headers["authorization"]: api_key is sent in this header too (auth bearer): set one of them`},
		{"key sent twice, api-key", `{ api_key = "sk-hidden", auth = "api-key", headers = { ["Api-Key"] = "other" } }`,
			`options.target.headers["Api-Key"]: api_key is sent in this header too (auth api-key)`},
		{"ca missing", `{ ca_cert = "certs/nope.pem" }`, "options.target.ca_cert: " + filepath.Join(certs, "nope.pem") + ": no such file or directory"},
		{"ca a key", `{ ca_cert = "certs/a-key.pem" }`, "options.target.ca_cert: " + filepath.Join(certs, "a-key.pem") + ": holds no PEM certificate"},
		{"ca a directory", `{ ca_cert = "certs" }`, "options.target.ca_cert: " + certs + ": is a directory"},
		{"ca empty", `{ ca_cert = "" }`, "options.target.ca_cert: empty: give the path of a PEM file, relative to the script"},
		{"ca a number", `{ ca_cert = 1 }`, "options.target.ca_cert: expected string, got number"},
		{"cert without key", `{ client_cert = "certs/a.pem" }`, "options.target.client_cert: needs client_key, the certificate's private key"},
		{"key without cert", `{ client_key = "certs/a-key.pem" }`, "options.target.client_key: needs client_cert, the certificate it is the key of"},
		{"key missing", `{ client_cert = "certs/a.pem", client_key = "certs/none.pem" }`, "options.target.client_key: " + filepath.Join(certs, "none.pem") + ": no such file"},
		{"pair mismatched", `{ client_cert = "certs/a.pem", client_key = "certs/b-key.pem" }`,
			"options.target: client_cert, client_key: " + filepath.Join(certs, "a.pem") + " and " + filepath.Join(certs, "b-key.pem") +
				" are not a certificate and its private key: private key does not match public key"},
		{"server_name a URL", `{ server_name = "https://h" }`, `options.target.server_name: "https://h" is not a host name`},
		{"server_name empty", `{ server_name = "" }`, `options.target.server_name: "" is not a host name`},
		{"insecure a string", `{ insecure_skip_verify = "yes" }`, "options.target.insecure_skip_verify: expected boolean, got string"},
		{"http2 on http", `{ base_url = "http://h/v1", http2 = true }`,
			"options.target.http2: base_url is plain http://, and HTTP/2 is negotiated in TLS: set h2c = true to speak it in clear text (prior knowledge), or use https://"},
		{"h2c on https", `{ base_url = "https://h/v1", h2c = true }`, "options.target.h2c: h2c is HTTP/2 in clear text, but base_url is https://: set http2 = true instead"},
		{"h2c a number", `{ h2c = 1 }`, "options.target.h2c: expected boolean, got number"},
		{"metrics_url true", `{ metrics_url = true }`, "options.target.metrics_url: true names no URL: give the server's Prometheus URL, or false to scrape no metrics"},
		{"key typo", `{ ca_certs = "certs/a.pem" }`, "options.target.ca_certs: unknown key (did you mean ca_cert?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileTarget(t, dir, tt.target)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-hidden") {
				t.Errorf("error = %q: it quotes a secret", err)
			}
		})
	}
}

// TestOptionsTargetJSONHidesHeaders: the plan's JSON (the result file's
// plan, the fingerprint) holds no header or query value.
func TestOptionsTargetJSONHidesHeaders(t *testing.T) {
	got, err := compileTarget(t, t.TempDir(), `{ headers = { ["X-Api-Key"] = "sk-hidden-h" }, query = { sig = "sk-hidden-q" } }`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Headers) != 1 || len(got.Query) != 1 {
		t.Fatalf("headers %v, query %v: not decoded", got.Headers, got.Query)
	}
	text, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "sk-hidden") {
		t.Errorf("the target's JSON holds a header or query value: %s", text)
	}
}
