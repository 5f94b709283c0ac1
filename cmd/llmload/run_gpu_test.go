package main

import (
	"errors"
	"strings"
	"testing"
)

// TestGPUFlags accepts nvidia-smi and http(s) DCGM URLs, and rejects any
// other sampler, a URL that could never be scraped and one given twice as
// usage errors.
func TestGPUFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		sampler string
		urls    []string
		want    string
	}{
		{"none", "", nil, ""},
		{"nvidia-smi and two nodes", "nvidia-smi", []string{"http://a:9400/metrics", "http://b:9400/metrics"}, ""},
		{"other sampler", "rocm-smi", nil, `--gpu "rocm-smi"`},
		{"not http", "", []string{"ftp://a/metrics"}, "is not an http(s) URL"},
		{"twice", "", []string{"http://a:9400/metrics", "http://a:9400/metrics"}, "is given twice"},
	} {
		g := gpuFlags{sampler: c.sampler, urls: c.urls}
		err := g.check()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		var usage *usageError
		if err != nil && !errors.As(err, &usage) {
			t.Errorf("%s: %T, want a usage error", c.name, err)
		}
		if err == nil {
			if o := g.options(); o.Sampler != c.sampler || len(o.URLs) != len(c.urls) {
				t.Errorf("%s: options %+v", c.name, o)
			}
		}
	}
}
