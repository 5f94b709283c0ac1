package kuberun

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/llmload/llmload/engine/kube"
)

// Created are the Jobs as the API server made them: their uids tell
// their pods from an earlier run's.
type Created struct {
	Segments, Merge *batchv1.Job
}

// Create makes the run's objects, in the order they apply. Before it
// makes anything it checks that every Secret the pods read exists and
// holds its key, and that neither Job exists (Jobs are immutable: an
// earlier run of the same name must be deleted first). A ConfigMap, a
// claim or a Service an earlier run of this name made is reused (the
// ConfigMap and Service updated); one made by anything else is an
// error. What it does goes to w.
func (c *Cluster) Create(ctx context.Context, m *kube.Manifests, w io.Writer) (*Created, error) {
	ns := m.Segments.Namespace
	for _, ref := range m.Secrets {
		if err := c.checkSecret(ctx, ns, ref, w); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{m.Segments.Name, m.Merge.Name} {
		if err := c.jobs().get(ctx, ns, name, &batchv1.Job{}); err == nil {
			return nil, existsError("job", name, m)
		} else if !apierrors.IsNotFound(err) {
			return nil, apiError("job", name, ns, err)
		}
	}
	if err := c.putConfigMap(ctx, m); err != nil {
		return nil, err
	}
	if err := c.putClaim(ctx, m, w); err != nil {
		return nil, err
	}
	if err := c.putService(ctx, m); err != nil {
		return nil, err
	}
	seg, err := c.createJob(ctx, m, m.Segments)
	if err != nil {
		return nil, err
	}
	merge, err := c.createJob(ctx, m, m.Merge)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "created in namespace %s: job %s (%d segments), job %s\n", ns, seg.Name, *seg.Spec.Completions, merge.Name)
	return &Created{Segments: seg, Merge: merge}, nil
}

// checkSecret makes sure the pods will find what they read from a
// Secret (the API key, the history's DSN): a missing Secret would leave
// the pods waiting in CreateContainerConfigError. Only the key's presence
// is looked at; its value is never read out. Not being allowed to read
// Secrets is not the pods' problem: that is said, and the run goes on.
func (c *Cluster) checkSecret(ctx context.Context, ns string, ref kube.SecretRef, w io.Writer) error {
	sec := &corev1.Secret{}
	err := c.secrets().get(ctx, ns, ref.Name, sec)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("--%s %s: no such Secret in namespace %s; create it first: kubectl -n %s create secret generic %s --from-literal=%s=...",
			ref.Flag, ref.Name, ns, ns, ref.Name, ref.Key)
	case apierrors.IsForbidden(err):
		fmt.Fprintf(w, "warning: not allowed to read Secret %s in namespace %s, so not checked: a missing one leaves the pods waiting (CreateContainerConfigError)\n", ref.Name, ns)
		return nil
	case err != nil:
		return apiError("secret", ref.Name, ns, err)
	}
	if _, ok := sec.Data[ref.Key]; !ok {
		return fmt.Errorf("--%s %s: the Secret has no key %s (its keys: %s); the pods read it from that key",
			ref.Flag, ref.Name, ref.Key, strings.Join(keys(sec.Data), ", "))
	}
	return nil
}

func keys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// putConfigMap creates the scenario's ConfigMap, or replaces the one an
// earlier run of this name left (its Jobs are gone: Create checked).
func (c *Cluster) putConfigMap(ctx context.Context, m *kube.Manifests) error {
	ns := m.ConfigMap.Namespace
	err := c.configMaps().create(ctx, ns, m.ConfigMap, &corev1.ConfigMap{})
	if !apierrors.IsAlreadyExists(err) {
		return apiError("configmap", m.ConfigMap.Name, ns, err)
	}
	old := &corev1.ConfigMap{}
	if err := c.configMaps().get(ctx, ns, m.ConfigMap.Name, old); err != nil {
		return apiError("configmap", m.ConfigMap.Name, m.ConfigMap.Namespace, err)
	}
	if !Owned(old, m.Name) {
		return notOursError("configmap", old.Name, m)
	}
	cm := m.ConfigMap.DeepCopy()
	cm.ResourceVersion = old.ResourceVersion
	err = c.configMaps().update(ctx, ns, cm.Name, cm, &corev1.ConfigMap{})
	return apiError("configmap", cm.Name, ns, err)
}

// putClaim creates the results' claim, or keeps the one an earlier run
// of this name made: run ids keep the runs' files apart in it.
func (c *Cluster) putClaim(ctx context.Context, m *kube.Manifests, w io.Writer) error {
	if m.Claim == nil {
		return nil // --pvc: the user's own
	}
	ns := m.Claim.Namespace
	err := c.claims().create(ctx, ns, m.Claim, &corev1.PersistentVolumeClaim{})
	if !apierrors.IsAlreadyExists(err) {
		return apiError("persistentvolumeclaim", m.Claim.Name, ns, err)
	}
	old := &corev1.PersistentVolumeClaim{}
	if err := c.claims().get(ctx, ns, m.Claim.Name, old); err != nil {
		return apiError("persistentvolumeclaim", m.Claim.Name, m.Claim.Namespace, err)
	}
	if !Owned(old, m.Name) {
		return notOursError("persistentvolumeclaim", old.Name, m)
	}
	fmt.Fprintf(w, "reusing the claim %s of an earlier run named %s\n", old.Name, m.Name)
	return nil
}

// putService creates the metrics Service, or updates the one an earlier
// run of this name left.
func (c *Cluster) putService(ctx context.Context, m *kube.Manifests) error {
	if m.Service == nil {
		return nil
	}
	ns := m.Service.Namespace
	err := c.services().create(ctx, ns, m.Service, &corev1.Service{})
	if !apierrors.IsAlreadyExists(err) {
		return apiError("service", m.Service.Name, ns, err)
	}
	old := &corev1.Service{}
	if err := c.services().get(ctx, ns, m.Service.Name, old); err != nil {
		return apiError("service", m.Service.Name, m.Service.Namespace, err)
	}
	if !Owned(old, m.Name) {
		return notOursError("service", old.Name, m)
	}
	svc := m.Service.DeepCopy()
	svc.ResourceVersion = old.ResourceVersion
	err = c.services().update(ctx, ns, svc.Name, svc, &corev1.Service{})
	return apiError("service", svc.Name, ns, err)
}

func (c *Cluster) createJob(ctx context.Context, m *kube.Manifests, job *batchv1.Job) (*batchv1.Job, error) {
	got := &batchv1.Job{}
	err := c.jobs().create(ctx, job.Namespace, job, got)
	if apierrors.IsAlreadyExists(err) {
		return nil, existsError("job", job.Name, m)
	}
	if err != nil {
		return nil, apiError("job", job.Name, job.Namespace, err)
	}
	return got, nil
}

// existsError is a Job of this run's name that exists already.
func existsError(kind, name string, m *kube.Manifests) error {
	ns := m.Segments.Namespace
	return fmt.Errorf("%s %s exists already in namespace %s, from an earlier run named %s (Jobs are immutable); delete it first: kubectl -n %s delete job %s %s, or give --name",
		kind, name, ns, m.Name, ns, m.Segments.Name, m.Merge.Name)
}

// notOursError is an object of the name this run needs that llmload k8s
// did not make for a run of that name.
func notOursError(kind, name string, m *kube.Manifests) error {
	return fmt.Errorf("%s %s exists already in namespace %s and was not made by llmload k8s for a run named %s: give another --name",
		kind, name, m.Segments.Namespace, m.Name)
}

// apiError names the object an API call was about; nil stays nil.
func apiError(kind, name, ns string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s in namespace %s: %w", kind, name, ns, err)
}

// podContainer is the container each kind of pod runs.
func podContainer(job *batchv1.Job) string {
	return job.Spec.Template.Spec.Containers[0].Name
}
