package kuberun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/llmload/llmload/engine/kube"
)

var t0 = time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)

// pod is a pod of job uid, made at t0+age seconds, with its container
// "segment" or "merge" in the given state.
type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0),
		Labels: map[string]string{}, Annotations: map[string]string{}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func of(uid string) podOpt {
	return func(p *corev1.Pod) { p.Labels[batchv1.ControllerUidLabel] = uid }
}

func index(i int) podOpt {
	return func(p *corev1.Pod) { p.Annotations[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(i) }
}

func age(s int) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
}

func unschedulable(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}
}

func onNode(p *corev1.Pod) {
	p.Spec.NodeName = "node-1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
}

func waiting(c, reason string) podOpt {
	return func(p *corev1.Pod) {
		onNode(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
}

func running(c string) podOpt {
	return func(p *corev1.Pod) {
		onNode(p)
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}
}

func exited(c string, code int32, reason string) podOpt {
	return func(p *corev1.Pod) {
		onNode(p)
		p.Status.Phase = corev1.PodFailed
		if code == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}}
	}
}

func evicted(p *corev1.Pod) {
	onNode(p)
	p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
}

func TestPodState(t *testing.T) {
	tests := []struct {
		name  string
		pod   corev1.Pod
		state State
		why   string
	}{
		{"new", pod("p"), Unscheduled, ""},
		{"unschedulable", pod("p", unschedulable), Unscheduled, "Unschedulable"},
		{"on a node", pod("p", onNode), Starting, ""},
		{"creating", pod("p", waiting("segment", "ContainerCreating")), Starting, ""},
		{"pull failing", pod("p", waiting("segment", "ImagePullBackOff")), Starting, "ImagePullBackOff"},
		{"no secret", pod("p", waiting("segment", "CreateContainerConfigError")), Starting, "CreateContainerConfigError"},
		{"running", pod("p", running("segment")), Running, ""},
		{"done", pod("p", exited("segment", 0, "Completed")), Done, ""},
		{"failed", pod("p", exited("segment", 1, "Error")), Failed, "exit code 1"},
		{"killed", pod("p", exited("segment", 137, "OOMKilled")), Failed, "exit code 137, OOMKilled"},
		{"evicted", pod("p", evicted), Failed, "Evicted"},
		{"another container", pod("p", running("sidecar")), Starting, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, why := PodState(&tt.pod, "segment")
			if st != tt.state || why != tt.why {
				t.Errorf("PodState = %s %q, want %s %q", st, why, tt.state, tt.why)
			}
		})
	}
}

func TestSegmentStates(t *testing.T) {
	const uid = "seg-uid"
	tests := []struct {
		name       string
		pods       []corev1.Pod
		summary    string
		unfinished string
	}{
		{"no pods yet", nil, "segments: 4 unscheduled", "[0 1 2 3]"},
		{"mixed", []corev1.Pod{
			pod("a", of(uid), index(0), running("segment")),
			pod("b", of(uid), index(1), waiting("segment", "ImagePullBackOff")),
			pod("c", of(uid), index(2), unschedulable),
			pod("d", of(uid), index(3), running("segment")),
		}, "segments: 1 unscheduled (Unschedulable), 1 starting (ImagePullBackOff), 2 running", "[0 1 2 3]"},
		{"ended", []corev1.Pod{
			pod("a", of(uid), index(0), exited("segment", 0, "Completed")),
			pod("b", of(uid), index(1), exited("segment", 1, "Error")),
			pod("c", of(uid), index(2), exited("segment", 0, "Completed")),
			pod("d", of(uid), index(3), evicted),
		}, "segments: 2 done, 2 failed: 1 (exit code 1), 3 (Evicted)", "[]"},
		{"the newest pod of an index counts", []corev1.Pod{
			pod("a2", of(uid), index(0), age(5), running("segment")),
			pod("a1", of(uid), index(0), age(0), evicted),
		}, "segments: 3 unscheduled, 1 running", "[0 1 2 3]"},
		{"an earlier Job's pod and a pod with no index are not ours", []corev1.Pod{
			pod("old", of("earlier-uid"), index(0), running("segment")),
			pod("odd", of(uid), running("segment")),
			pod("far", of(uid), index(9), running("segment")),
		}, "segments: 4 unscheduled", "[0 1 2 3]"},
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SegmentStates(PodsOf(job, tt.pods), 4, "segment")
			if got := s.Summary(); got != tt.summary {
				t.Errorf("Summary = %q, want %q", got, tt.summary)
			}
			if got := fmt.Sprint(s.Unfinished()); got != tt.unfinished {
				t.Errorf("Unfinished = %s, want %s", got, tt.unfinished)
			}
		})
	}
}

// failedJob is a merge Job that ended Failed for reason.
func failedJob(reason, message string) *batchv1.Job {
	return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message},
	}}}
}

func TestMergeOutcome(t *testing.T) {
	complete := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	tests := []struct {
		name   string
		job    *batchv1.Job
		pods   []corev1.Pod
		ended  bool
		code   int32
		reason string
	}{
		{"no job", nil, nil, false, 0, ""},
		{"running", &batchv1.Job{}, []corev1.Pod{pod("m", running("merge"))}, false, 0, ""},
		{"failure target, not yet failed", &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonPodFailurePolicy}}}},
			[]corev1.Pod{pod("m", exited("merge", 99, "Error"))}, false, 0, ""},
		{"complete", complete, []corev1.Pod{pod("m", exited("merge", 0, "Completed"))}, true, 0, "completed"},
		{"threshold failed", failedJob(batchv1.JobReasonPodFailurePolicy, "Container merge for pod load/x-merge-abc failed with exit code 99 matching FailJob rule at index 0"),
			[]corev1.Pod{pod("m", exited("merge", 99, "Error"))}, true, 99, "the merge's own: a threshold failed"},
		{"error", failedJob(batchv1.JobReasonPodFailurePolicy, ""),
			[]corev1.Pod{pod("m1", evicted), pod("m2", age(9), exited("merge", 1, "Error"))}, true, 1, "the merge's own: an error"},
		{"pod gone, message kept", failedJob(batchv1.JobReasonPodFailurePolicy, "Container merge for pod load/x-merge-abc failed with exit code 99 matching FailJob rule at index 0"),
			nil, true, 99, "a threshold failed"},
		{"deadline", failedJob(batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"),
			[]corev1.Pod{pod("m", running("merge"))}, true, 1, "DeadlineExceeded Job was active longer"},
		{"retries spent", failedJob(batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"),
			[]corev1.Pod{pod("m1", evicted), pod("m2", evicted), pod("m3", evicted)}, true, 1, "BackoffLimitExceeded"},
		{"failed condition not true", &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionFalse}}}}, nil, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ended := MergeOutcome(tt.job, tt.pods, "merge")
			if ended != tt.ended || o.ExitCode != tt.code || !strings.Contains(o.Reason, tt.reason) {
				t.Errorf("MergeOutcome = %+v, ended %v; want code %d, reason with %q, ended %v", o, ended, tt.code, tt.reason, tt.ended)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	p := pod("m", exited("merge", 99, "Error"))
	if code, ok := ExitCode(&p, "merge"); !ok || code != 99 {
		t.Errorf("ExitCode = %d %v, want 99", code, ok)
	}
	if _, ok := ExitCode(&p, "other"); ok {
		t.Errorf("ExitCode of a container the pod lacks is known")
	}
	r := pod("m", running("merge"))
	if _, ok := ExitCode(&r, "merge"); ok {
		t.Errorf("ExitCode of a running container is known")
	}
}

func TestLogPodAndMergeSummary(t *testing.T) {
	tests := []struct {
		name    string
		pods    []corev1.Pod
		log     string
		summary string
	}{
		{"none", nil, "", "merge: no pod yet"},
		{"pulling", []corev1.Pod{pod("m1", waiting("merge", "ContainerCreating"))}, "", "merge: starting"},
		{"running", []corev1.Pod{pod("m1", running("merge"))}, "m1", "merge: running (waiting for the segments' results, then merging)"},
		{"replaced", []corev1.Pod{pod("m1", exited("merge", 143, "Error")), pod("m2", age(3), running("merge"))}, "m2",
			"merge: running (waiting for the segments' results, then merging), pod 2 of 2 (an earlier one was disrupted)"},
		{"replacement not started", []corev1.Pod{pod("m1", exited("merge", 143, "Error")), pod("m2", age(3), onNode)}, "m1",
			"merge: starting, pod 2 of 2 (an earlier one was disrupted)"},
		{"done", []corev1.Pod{pod("m1", exited("merge", 99, "Error"))}, "m1", "merge: failed (exit code 99)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LogPod(tt.pods, "merge"); got != tt.log {
				t.Errorf("LogPod = %q, want %q", got, tt.log)
			}
			if got := MergeSummary(tt.pods, "merge"); got != tt.summary {
				t.Errorf("MergeSummary = %q, want %q", got, tt.summary)
			}
		})
	}
}

func TestUnfinished(t *testing.T) {
	segs := Segments{States: []State{Done, Running, Failed, Unscheduled}, Whys: make([]string, 4)}
	got := Unfinished(segs, []corev1.Pod{pod("m", running("merge"))}, "merge")
	if want := "segments 1 (running), 3 (unscheduled); the merge Job (its pod running)"; got != want {
		t.Errorf("Unfinished = %q, want %q", got, want)
	}
	if got, want := Unfinished(Segments{States: []State{Done}, Whys: []string{""}}, nil, "merge"), "the merge Job (its pod unscheduled)"; got != want {
		t.Errorf("Unfinished = %q, want %q", got, want)
	}
}

func TestOwned(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"ours", map[string]string{"app.kubernetes.io/name": "llmload", "app.kubernetes.io/instance": "nightly"}, true},
		{"another run", map[string]string{"app.kubernetes.io/name": "llmload", "app.kubernetes.io/instance": "other"}, false},
		{"someone else's", map[string]string{"app.kubernetes.io/instance": "nightly"}, false},
		{"no labels", nil, false},
	}
	for _, tt := range tests {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}}
		if got := Owned(cm, "nightly"); got != tt.want {
			t.Errorf("%s: Owned = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestManifestsAreOwned: what kube builds, kuberun recognises as its
// own on a second run, so a claim or ConfigMap left by a run is reused.
func TestManifestsAreOwned(t *testing.T) {
	m := manifests(t, kube.Spec{Listen: ":9464"})
	for _, obj := range []metav1.Object{m.ConfigMap, m.Claim, m.Service, m.Segments, m.Merge} {
		if !Owned(obj, m.Name) {
			t.Errorf("%s is not recognised as the run's own: labels %v", obj.GetName(), obj.GetLabels())
		}
	}
	if got, want := Deadline(m), m.Wait+2*time.Minute; got != want {
		t.Errorf("Deadline = %v, want the merge's wait and 2m: %v", got, want)
	}
	cmds := strings.Join(Commands(m), "\n")
	for _, want := range []string{"kubectl -n load logs -f job/nightly-merge", "kubectl -n load delete job nightly nightly-merge"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("Commands lack %q:\n%s", want, cmds)
		}
	}
}

// manifests builds a small run named nightly in namespace load, with
// over's Listen.
func manifests(t *testing.T, over kube.Spec) *kube.Manifests {
	t.Helper()
	m, err := kube.Build(kube.Spec{Name: "nightly", Namespace: "load", Image: "llmload:1", Segments: 2, Seed: 1, Created: t0,
		Script: kube.File{Path: "s.lua", Data: []byte("x")}, Listen: over.Listen, Secret: "k", Load: kube.Load{VUs: 2, Length: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
