package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	enginerun "github.com/llmload/llmload/engine/run"
)

// TestSpansFlags: a receiver address must be host:port, its wait within
// bounds, and a wait given without a receiver is a mistake; each is a
// usage error naming the flag.
func TestSpansFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		spans   enginerun.Spans
		waitSet bool
		want    string
	}{
		{"none", enginerun.Spans{}, false, ""},
		{"loopback", enginerun.Spans{Listen: "127.0.0.1:4317", Wait: 10 * time.Second}, false, ""},
		{"any address, port 0", enginerun.Spans{Listen: ":0", Wait: time.Second}, true, ""},
		{"no port", enginerun.Spans{Listen: "127.0.0.1", Wait: time.Second}, false, `--otlp-traces-listen "127.0.0.1": want host:port`},
		{"a URL", enginerun.Spans{Listen: "http://127.0.0.1:4317", Wait: time.Second}, false, "want host:port"},
		{"no wait", enginerun.Spans{Listen: "127.0.0.1:4317"}, true, "--otlp-traces-wait 0s"},
		{"too long a wait", enginerun.Spans{Listen: "127.0.0.1:4317", Wait: time.Hour}, true, "at most 10m"},
		{"a wait without a receiver", enginerun.Spans{Wait: 5 * time.Second}, true, "--otlp-traces-wait needs --otlp-traces-listen"},
	} {
		err := checkSpansFlags(c.spans, c.waitSet)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		var usage *usageError
		if err != nil && !errors.As(err, &usage) {
			t.Errorf("%s: %T, want a usage error", c.name, err)
		}
	}
}
