package kube

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/yaml"
)

// Objects are the manifests in the order they apply: the ConfigMap and
// the claim the pods mount first, and the Service before the pods it
// selects.
func (m *Manifests) Objects() []any {
	objs := []any{m.ConfigMap}
	if m.Claim != nil {
		objs = append(objs, m.Claim)
	}
	if m.Service != nil {
		objs = append(objs, m.Service)
	}
	return append(objs, m.Segments, m.Merge)
}

// Start says when the load starts, for people: the fixed barrier's time,
// or the readiness barrier's rule.
func (m *Manifests) Start() string {
	if !m.StartAt.IsZero() {
		return "at " + m.StartAt.Format(time.RFC3339)
	}
	return fmt.Sprintf("when all %d pods are ready, at most %v after the first is", *m.Segments.Spec.Completions, m.ReadyTimeout)
}

// WriteYAML writes the manifests as one multi-document YAML stream for
// kubectl apply -f, headed by a comment that says what it runs.
func (m *Manifests) WriteYAML(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# llmload k8s: %s in %d segments, seed %d; the load starts %s.\n",
		m.Segments.Name, *m.Segments.Spec.Completions, m.Seed, m.Start())
	apply := "kubectl apply -f FILE"
	if !m.StartAt.IsZero() {
		apply = "Apply before then: " + apply
	}
	fmt.Fprintf(&b, "# %s. The merged summary: kubectl -n %s logs -f job/%s\n", apply, m.Merge.Namespace, m.Merge.Name)
	for _, obj := range m.Objects() {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(trimStatus(doc))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// emptyStatuses are the status an object made here marshals to: a
// Service's holds an empty load balancer.
var emptyStatuses = [][]byte{[]byte("status: {}\n"), []byte("status:\n  loadBalancer: {}\n")}

// trimStatus leaves out an object's empty status: one made here has none.
func trimStatus(doc []byte) []byte {
	for _, st := range emptyStatuses {
		if t, ok := bytes.CutSuffix(doc, st); ok {
			return t
		}
	}
	return doc
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
	if s.StartIn != 0 && s.StartIn < 30*time.Second {
		out = append(out, fmt.Sprintf("the load starts %v after now: pods still pulling the image by then start late, out of step", s.StartIn))
	}
	if p := listenPort(s.Listen); s.Listen != "" && p < 1024 {
		out = append(out, fmt.Sprintf("--listen port %d: the pods run as a non-root user with no capabilities, and bind a port below 1024 only where the container runtime allows unprivileged ports; 9464 is the usual one", p))
	}
	return out
}
