package report

import (
	"strings"
	"testing"

	"github.com/llmload/llmload/engine/plan"
)

// TestPlanTargetSettings: the plan names every header and query parameter
// and shows the values of those whose names are not sensitive; it never
// shows a sensitive one, nor the key.
func TestPlanTargetSettings(t *testing.T) {
	const secret = "sk-plan-secret-0123456789"
	tests := []struct {
		name   string
		target plan.Target
		want   []string
		absent []string
	}{
		{"defaults", plan.Target{BaseURL: "https://h/v1", APIKey: secret}, nil, []string{"headers", "query", "auth ", "tls ", "http "}},
		{"headers and query", plan.Target{
			Headers: []plan.Header{{Name: "Authorization", Value: "Basic " + secret}, {Name: "OpenAI-Organization", Value: "org-1"},
				{Name: "X-Tenant", Value: "acme"}, {Name: "X-Note", Value: "Bearer " + secret}},
			Query: []plan.Header{{Name: "api-version", Value: "2024-10-21"}, {Name: "sig_token", Value: secret}},
		}, []string{
			"headers Authorization: [redacted], OpenAI-Organization: org-1, X-Tenant: acme, X-Note: Bearer [redacted]\n",
			"query   api-version=2024-10-21, sig_token=[redacted]\n",
		}, nil},
		{"api-key", plan.Target{APIKey: secret, Auth: plan.AuthAPIKey}, []string{"auth    the API key as api-key: [redacted]\n"}, nil},
		{"bearer in a gateway's header", plan.Target{APIKey: secret, AuthHeader: "X-Gateway-Auth"},
			[]string{"auth    the API key as X-Gateway-Auth: Bearer [redacted]\n"}, nil},
		{"no key yet", plan.Target{Auth: plan.AuthAPIKey}, []string{"auth    the API key in api-key, when one is set (none is)\n"}, nil},
		{"none", plan.Target{Auth: plan.AuthNone}, []string{"auth    none: no API key is sent\n"}, nil},
		{"tls", plan.Target{TLS: plan.TLS{CACert: "/c/ca.pem", ClientCert: "/c/me.pem", ClientKey: "/c/me-key.pem",
			ServerName: "llm.internal", InsecureSkipVerify: true}},
			[]string{"tls     trusts /c/ca.pem, client certificate /c/me.pem (key /c/me-key.pem), server name llm.internal, " +
				"NO verification of the server's certificate (insecure)\n"}, nil},
		{"http2", plan.Target{HTTP2: true}, []string{"http    HTTP/2, negotiated in TLS (ALPN)\n"}, nil},
		{"h2c", plan.Target{HTTP2: true, H2C: true}, []string{"http    HTTP/2 in clear text (h2c, prior knowledge)\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan.Plan{Script: "s.lua", Target: tt.target}
			text := string(render(t, Plan(p, nil, nil)))
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("plan lacks %q:\n%s", w, text)
				}
			}
			for _, a := range append(tt.absent, secret) {
				if strings.Contains(text, a) {
					t.Errorf("plan holds %q:\n%s", a, text)
				}
			}
			if !strings.Contains(text, "model (the server's first model)\n") || !strings.Contains(text, "\nseed    0\n") {
				t.Errorf("the settings displaced the header's other lines:\n%s", text)
			}
		})
	}
}
