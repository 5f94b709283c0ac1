package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	"github.com/llmload/llmload/engine/textfmt"
)

// writeTargetSettings writes what a target sends beyond its URL and model
// — headers, query parameters, how the key goes, TLS and HTTP/2 — one line
// each, and nothing for a setting left at its default. A header or
// parameter whose name is sensitive (plan.SensitiveName) shows as
// redact.Redacted; the others show their values, since a wrong tenant or
// api-version is what a reader of the plan looks for.
func writeTargetSettings(b *bytes.Buffer, t plan.Target) {
	if len(t.Headers) > 0 {
		fmt.Fprintf(b, "headers %s\n", settingList(t.Headers, ": "))
	}
	if len(t.Query) > 0 {
		fmt.Fprintf(b, "query   %s\n", settingList(t.Query, "="))
	}
	if t.Auth != "" || t.AuthHeader != "" {
		fmt.Fprintf(b, "auth    %s\n", authLine(t))
	}
	if t.TLS != (plan.TLS{}) {
		fmt.Fprintf(b, "tls     %s\n", tlsLine(t.TLS))
	}
	switch {
	case t.H2C:
		b.WriteString("http    HTTP/2 in clear text (h2c, prior knowledge)\n")
	case t.HTTP2:
		b.WriteString("http    HTTP/2, negotiated in TLS (ALPN)\n")
	}
}

// settingList writes name, sep and value for each, sensitive values
// redacted.
func settingList(list []plan.Header, sep string) string {
	parts := make([]string, len(list))
	for i, h := range list {
		v := redact.Redacted
		if !plan.SensitiveName(h.Name) {
			v = textfmt.Clip(redact.Credentials(h.Value))
		}
		parts[i] = h.Name + sep + v
	}
	return strings.Join(parts, ", ")
}

// authLine says in which header, and how, the API key is sent.
func authLine(t plan.Target) string {
	name := t.AuthHeaderName()
	switch {
	case t.Auth == plan.AuthNone:
		return "none: no API key is sent"
	case t.APIKey == "":
		return fmt.Sprintf("the API key in %s, when one is set (none is)", name)
	case t.Auth == plan.AuthAPIKey || t.Auth == plan.AuthXAPIKey:
		return fmt.Sprintf("the API key as %s: %s", name, redact.Redacted)
	}
	return fmt.Sprintf("the API key as %s: Bearer %s", name, redact.Redacted)
}

// tlsLine lists the TLS settings that differ from the system's defaults.
func tlsLine(c plan.TLS) string {
	var parts []string
	if c.CACert != "" {
		parts = append(parts, "trusts "+c.CACert)
	}
	if c.ClientCert != "" {
		parts = append(parts, fmt.Sprintf("client certificate %s (key %s)", c.ClientCert, c.ClientKey))
	}
	if c.ServerName != "" {
		parts = append(parts, "server name "+c.ServerName)
	}
	if c.InsecureSkipVerify {
		parts = append(parts, "NO verification of the server's certificate (insecure)")
	}
	return strings.Join(parts, ", ")
}
