package kube

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// indexVar is the Indexed Job's completion index, which Kubernetes expands
// in args: the image has no shell to do it.
const indexVar = "$(JOB_COMPLETION_INDEX)"

// Time budgets. A run may overrun its plan (iteration-count executors,
// a slow start), so the budget adds a margin to the lead and the length.
const (
	BudgetMargin = 5 * time.Minute
	// MergeGrace is how much longer the merge waits than the segments
	// may run: a segment stopped at its deadline still writes its result.
	MergeGrace = 2 * time.Minute
)

// Budget is how long the segments may take from being applied: the lead
// to the barrier (the fixed barrier's StartIn, or the readiness wait),
// the run's length, and BudgetMargin plus a tenth of the length. The
// segment Job's activeDeadlineSeconds, which counts from the Job's
// start, so the first segment's own start-up comes out of the margin.
func Budget(s Spec) time.Duration {
	return (lead(s) + s.Load.Length + BudgetMargin + s.Load.Length/10).Round(time.Second)
}

// lead is the longest wait before the load: StartIn for a fixed
// barrier, else the readiness wait.
func lead(s Spec) time.Duration {
	switch {
	case s.StartIn != 0:
		return s.StartIn
	case s.ReadyTimeout != 0:
		return s.ReadyTimeout
	}
	return DefaultReadyTimeout
}

// segmentJob runs the segments: pod i runs segment i/N. Every pod must
// start its load at the barrier, so a pod that fails is not retried (a
// retry would start late, out of step, and merge a different window of
// time): backoffLimitPerIndex 0 fails that index alone while the others
// finish, where backoffLimit 0 would stop them all at the first failure.
func segmentJob(s Spec, m *Manifests, items []corev1.KeyToPath, res corev1.ResourceRequirements) *batchv1.Job {
	n := int32(s.Segments)
	c := container("segment", s.Image, segmentArgs(s, m, items[0].Path), res)
	c.Env = segmentEnv(s)
	c.VolumeMounts = []corev1.VolumeMount{
		{Name: "scenario", MountPath: ScenarioDir, ReadOnly: true},
		{Name: "results", MountPath: ResultsDir},
	}
	tmpl := metav1.ObjectMeta{Labels: labels(s, "segment")}
	if m.Listen != "" {
		port := listenPort(m.Listen)
		c.Ports = []corev1.ContainerPort{{Name: MetricsPortName, ContainerPort: port, Protocol: corev1.ProtocolTCP}}
		tmpl.Annotations = scrapeAnnotations(port)
	}
	pod := podSpec(c, scenarioVolume(m.ConfigMap, items), resultsVolume(m.ClaimName))
	pod.TopologySpreadConstraints = spread(s)
	job := &batchv1.Job{TypeMeta: typeMeta("batch/v1", "Job"), ObjectMeta: objectMeta(s, s.Name, "segment")}
	job.Spec = batchv1.JobSpec{
		CompletionMode: ptr(batchv1.IndexedCompletion), Completions: &n, Parallelism: &n,
		BackoffLimitPerIndex:  ptr(int32(0)),
		ActiveDeadlineSeconds: ptr(int64(Budget(s) / time.Second)),
		Template:              corev1.PodTemplateSpec{ObjectMeta: tmpl, Spec: pod},
	}
	return job
}

// segmentArgs is `llmload run` for segment $(JOB_COMPLETION_INDEX)/N,
// behind the run's barrier, with its exports.
func segmentArgs(s Spec, m *Manifests, script string) []string {
	args := []string{"run", escape(path.Join(ScenarioDir, script)),
		"--segment", indexVar + "/" + strconv.Itoa(s.Segments)}
	args = append(args, barrierArgs(m)...)
	args = append(args, "--out", resultPath(m.RunID, indexVar),
		"-q", "--seed", strconv.FormatInt(s.Seed, 10))
	args = append(args, exportArgs(s, m)...)
	keys := make([]string, 0, len(s.Params))
	for k := range s.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, "--set", escape(k+"="+s.Params[k]))
	}
	return args
}

// barrierArgs is the fixed barrier's --start-at, or the readiness
// barrier's directory and wait.
func barrierArgs(m *Manifests) []string {
	if !m.StartAt.IsZero() {
		return []string{"--start-at", m.StartAt.Format(time.RFC3339)}
	}
	return []string{"--barrier", m.BarrierDir, "--barrier-timeout", m.ReadyTimeout.String()}
}

// exportArgs are the --export and --listen every segment gets, as run
// reads them (KIND=URL[,native], ADDR[,native]).
func exportArgs(s Spec, m *Manifests) []string {
	var args []string
	for _, t := range s.Exports {
		args = append(args, "--export", escape(t.Kind+"="+t.URL+nativeIf(t.Native)))
	}
	if m.Listen != "" {
		args = append(args, "--listen", m.Listen+nativeIf(s.ListenNative))
	}
	return args
}

func nativeIf(native bool) string {
	if native {
		return ",native"
	}
	return ""
}

// resultPath is segment i's result file in the claim.
func resultPath(runID, index string) string {
	return path.Join(ResultsDir, runID+"-segment-"+index+".json")
}

// segmentEnv sets the completion index explicitly (args may only expand
// variables the container's env defines), the target and model when
// given, and the API key from the Secret: never a key in the manifest.
func segmentEnv(s Spec) []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.annotations['%s']", batchv1.JobCompletionIndexAnnotation)},
	}}}
	if s.Target != "" {
		env = append(env, corev1.EnvVar{Name: "LLMLOAD_BASE_URL", Value: escape(s.Target)})
	}
	if s.Model != "" {
		env = append(env, corev1.EnvVar{Name: "LLMLOAD_MODEL", Value: escape(s.Model)})
	}
	if s.Secret != "" {
		env = append(env, corev1.EnvVar{Name: "LLMLOAD_API_KEY", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.Secret}, Key: SecretKey},
		}})
	}
	return env
}

// SecretKey is the key of the API key in the Secret --secret names.
const SecretKey = "api-key"

// spread asks the scheduler to put the segments on different nodes where
// it can: segments sharing a node compete for its CPU, which is what
// splitting the load was to avoid. ScheduleAnyway, since fewer nodes
// than segments must still run.
func spread(s Spec) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: labels(s, "segment")},
	}}
}

// mergeJob waits for every segment's result and merges them. It is
// applied with the segments, so it waits for the whole budget and a
// grace. Merging is idempotent, so a merge pod that was disrupted
// (evicted, its node drained) is retried; an exit code of its own — 1
// error, 2 usage, 99 a threshold failed — is final, and the Job fails.
func mergeJob(s Spec, m *Manifests) *batchv1.Job {
	c := container("merge", s.Image, mergeArgs(s, m), mergeResources(s.Segments))
	if s.HistorySecret != "" {
		c.Env = []corev1.EnvVar{{Name: "LLMLOAD_HISTORY", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: s.HistorySecret}, Key: HistorySecretKey},
		}}}
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}}
	job := &batchv1.Job{TypeMeta: typeMeta("batch/v1", "Job"), ObjectMeta: objectMeta(s, s.Name+"-merge", "merge")}
	job.Spec = batchv1.JobSpec{
		BackoffLimit: ptr(int32(2)),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr("merge"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1, 2, 99}}},
			{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels(s, "merge")},
			Spec: podSpec(c, resultsVolume(m.ClaimName))},
	}
	return job
}

// mergeArgs is `llmload merge --wait`, every segment's file named: exec
// form has no glob. With the readiness barrier it watches the barrier
// too, so that a segment that was never ready ends the wait at once.
func mergeArgs(s Spec, m *Manifests) []string {
	args := []string{"merge", "--wait", m.Wait.String()}
	if m.BarrierDir != "" {
		args = append(args, "--barrier", m.BarrierDir)
	}
	for i := range s.Segments {
		args = append(args, resultPath(m.RunID, strconv.Itoa(i)))
	}
	args = append(args, "--out", m.MergedPath)
	if s.History != "" {
		args = append(args, "--history", escape(s.History))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		args = append(args, "--label", escape(k+"="+s.Labels[k]))
	}
	return args
}

// container is llmload with the restricted Pod Security profile's
// settings: the image is one static binary and needs nothing more.
func container(name, image string, args []string, res corev1.ResourceRequirements) corev1.Container {
	return corev1.Container{Name: name, Image: image, Args: args, Resources: res,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}}
}

// podSpec runs c once as the image's non-root user. fsGroup makes the
// results volume writable to that user; no service account token, since
// llmload never talks to the API server.
func podSpec(c corev1.Container, volumes ...corev1.Volume) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}, Volumes: volumes,
		AutomountServiceAccountToken: ptr(false), EnableServiceLinks: ptr(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr(true), RunAsUser: ptr(ImageUser), RunAsGroup: ptr(ImageUser), FSGroup: ptr(ImageUser),
			FSGroupChangePolicy: ptr(corev1.FSGroupChangeOnRootMismatch),
			SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// ImageUser is the uid and gid deploy/Dockerfile runs llmload as.
const ImageUser = int64(65532)

// escape doubles every '$' of a user's string in args and env values,
// where Kubernetes would expand $(NAME) ("$$" is a literal '$').
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }
