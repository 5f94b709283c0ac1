package kube

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/yaml"
)

// Objects are the manifests in the order they apply: the ConfigMap and
// the claim the pods mount first.
func (m *Manifests) Objects() []any {
	objs := []any{m.ConfigMap}
	if m.Claim != nil {
		objs = append(objs, m.Claim)
	}
	return append(objs, m.Segments, m.Merge)
}

// WriteYAML writes the manifests as one multi-document YAML stream for
// kubectl apply -f, headed by a comment that says what it runs.
func (m *Manifests) WriteYAML(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# llmload k8s: %s in %d segments, seed %d; the load starts at %s.\n",
		m.Segments.Name, *m.Segments.Spec.Completions, m.Seed, m.StartAt.Format(time.RFC3339))
	fmt.Fprintf(&b, "# Apply before then: kubectl apply -f FILE. The merged summary: kubectl -n %s logs -f job/%s\n",
		m.Merge.Namespace, m.Merge.Name)
	for _, obj := range m.Objects() {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		// An object made here has no status: leave out the empty one.
		b.Write(bytes.TrimSuffix(doc, []byte("status: {}\n")))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// warnings are what the user should know before applying.
func warnings(s Spec) []string {
	var out []string
	if !pinned(s.Image) {
		out = append(out, fmt.Sprintf("image %s names no version: nodes may pull different builds of llmload; use a tag or an @sha256 digest", s.Image))
	}
	if s.Target != "" && s.Secret == "" {
		out = append(out, "no --secret: the segments send no API key (LLMLOAD_API_KEY is not set in the pods)")
	}
	if s.StartIn < 30*time.Second {
		out = append(out, fmt.Sprintf("the load starts %v after now: pods still pulling the image by then start late, out of step", s.StartIn))
	}
	return out
}
