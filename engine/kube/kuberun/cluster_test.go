package kuberun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfig has two contexts: "load" with a namespace, "bare" without.
const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: not-a-real-token}
contexts:
- name: load
  context: {cluster: c, user: u, namespace: loadtest}
- name: bare
  context: {cluster: c, user: u}
current-context: load
`

// TestConnect reads kubeconfigs by kubectl's rules; it talks to no
// server (a client is made, nothing is sent).
func TestConnect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir) // no ~/.kube/config
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		name                string
		env, flag, context  string
		namespace, errorHas string
	}{
		{"flag, current context", "", path, "", "loadtest", ""},
		{"KUBECONFIG", path, "", "", "loadtest", ""},
		{"context without a namespace", "", path, "bare", "default", ""},
		{"no such context", "", path, "prod", "", "--context prod: no such context in --kubeconfig " + path + " (it has: bare, load)"},
		{"no such file", "", filepath.Join(dir, "missing"), "", "", "--kubeconfig " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{"no kubeconfig at all", "", "", "", "", "no cluster to run on: the kubeconfig ($KUBECONFIG, else ~/.kube/config) names none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			c, err := Connect(tt.flag, tt.context)
			if tt.errorHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errorHas) {
					t.Fatalf("Connect: %v, want an error with %q", err, tt.errorHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Namespace != tt.namespace || c.Server != "https://127.0.0.1:6443" {
				t.Errorf("namespace %q, server %q; want %q", c.Namespace, c.Server, tt.namespace)
			}
		})
	}
}
