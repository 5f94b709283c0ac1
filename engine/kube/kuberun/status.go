package kuberun

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// State is where one pod of the run stands, as its phase and its
// container's state tell.
type State int

// A pod's states, in the order a pod goes through them.
const (
	Unscheduled State = iota // no node yet (or no pod yet)
	Starting                 // on a node: pulling the image, creating the container
	Running                  // the container runs: VU start-up, warmup, the barrier, the load
	Done                     // exited 0
	Failed                   // exited otherwise, or the pod failed
)

var stateNames = [...]string{"unscheduled", "starting", "running", "done", "failed"}

func (s State) String() string { return stateNames[s] }

// PodState is where pod p stands; why is the reason Kubernetes gives for
// a pod that waits or failed (Unschedulable, ImagePullBackOff, exit code
// 1), "" when there is none.
func PodState(p *corev1.Pod, container string) (state State, why string) {
	cs := containerStatus(p, container)
	switch {
	case p.Status.Phase == corev1.PodSucceeded:
		return Done, ""
	case p.Status.Phase == corev1.PodFailed:
		return Failed, failure(p, cs)
	case cs != nil && cs.State.Terminated != nil:
		if cs.State.Terminated.ExitCode == 0 {
			return Done, ""
		}
		return Failed, failure(p, cs)
	case cs != nil && cs.State.Running != nil:
		return Running, ""
	case scheduled(p):
		if cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason != "ContainerCreating" {
			return Starting, cs.State.Waiting.Reason
		}
		return Starting, ""
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return Unscheduled, c.Reason
		}
	}
	return Unscheduled, ""
}

func scheduled(p *corev1.Pod) bool {
	if p.Spec.NodeName != "" {
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// failure says why a pod failed: its container's exit code and reason,
// else the pod's own reason (Evicted, DeadlineExceeded).
func failure(p *corev1.Pod, cs *corev1.ContainerStatus) string {
	if cs != nil && cs.State.Terminated != nil {
		t := cs.State.Terminated
		if t.Reason != "" && t.Reason != "Error" {
			return fmt.Sprintf("exit code %d, %s", t.ExitCode, t.Reason)
		}
		return fmt.Sprintf("exit code %d", t.ExitCode)
	}
	return p.Status.Reason
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// ExitCode is container's exit code in pod p, when it has terminated.
func ExitCode(p *corev1.Pod, container string) (int32, bool) {
	cs := containerStatus(p, container)
	if cs == nil || cs.State.Terminated == nil {
		return 0, false
	}
	return cs.State.Terminated.ExitCode, true
}

// PodsOf are the pods job made, oldest first: a pod carries its Job's uid
// in a label, so a pod left by an earlier Job of the same name is not
// taken for one of this Job's.
func PodsOf(job *batchv1.Job, pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if job != nil && job.UID != "" && p.Labels[batchv1.ControllerUidLabel] == string(job.UID) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return out
}

// Segments are the states of an Indexed Job's n segments, each its
// newest pod's (a segment is never retried, but a pod may be replaced
// before it ran).
type Segments struct {
	States []State
	Whys   []string // the reason of each segment's state, "" none
}

// SegmentStates reads the n segments' states from the segment Job's
// pods; a segment with no pod yet is Unscheduled.
func SegmentStates(pods []corev1.Pod, n int, container string) Segments {
	s := Segments{States: make([]State, n), Whys: make([]string, n)}
	newest := make([]*corev1.Pod, n)
	for i := range pods {
		p := &pods[i]
		idx, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || idx < 0 || idx >= n {
			continue
		}
		if newest[idx] == nil || !p.CreationTimestamp.Before(&newest[idx].CreationTimestamp) {
			newest[idx] = p
		}
	}
	for i, p := range newest {
		if p != nil {
			s.States[i], s.Whys[i] = PodState(p, container)
		}
	}
	return s
}

// Summary is one line of the segments' progress: how many are in each
// state, the reasons of those waiting, and which failed, and why:
// "segments: 2 starting (ImagePullBackOff), 6 running".
func (s Segments) Summary() string {
	var parts []string
	for st := Unscheduled; st <= Failed; st++ {
		var n int
		var whys, which []string
		for i, got := range s.States {
			if got != st {
				continue
			}
			n++
			if w := s.Whys[i]; w != "" && !slices.Contains(whys, w) && st != Failed {
				whys = append(whys, w)
			}
			if st == Failed {
				which = append(which, fmt.Sprintf("%d (%s)", i, cmpOr(s.Whys[i], "no reason given")))
			}
		}
		if n == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", n, st)
		switch {
		case len(which) > 0:
			part += ": " + strings.Join(which, ", ")
		case len(whys) > 0:
			part += " (" + strings.Join(whys, ", ") + ")"
		}
		parts = append(parts, part)
	}
	return "segments: " + strings.Join(parts, ", ")
}

// Unfinished lists the segments not done, by index: "0, 3 and 5".
func (s Segments) Unfinished() []int {
	var out []int
	for i, st := range s.States {
		if st != Done && st != Failed {
			out = append(out, i)
		}
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Outcome is how the run ended: the merge container's exit code (0 the
// gate passed, 1 an error, 99 a threshold failed) and what says so.
type Outcome struct {
	ExitCode int32
	Reason   string
}

// failJobCode is the exit code in a PodFailurePolicy condition's
// message: "Container merge for pod ns/p failed with exit code 99
// matching FailJob rule at index 0".
var failJobCode = regexp.MustCompile(`with exit code (\d+) matching FailJob rule`)

// MergeOutcome reads the merge Job's end: Complete is 0; Failed by the
// pod failure policy is the exit code its merge container ended with
// (read from the pod, else from the condition's message); Failed
// otherwise (its deadline, its retries spent) is 1, with the reason. ok
// is false while the Job has not ended.
func MergeOutcome(job *batchv1.Job, pods []corev1.Pod, container string) (o Outcome, ok bool) {
	if job == nil {
		return Outcome{}, false
	}
	if c := condition(job, batchv1.JobComplete); c != nil {
		return Outcome{ExitCode: 0, Reason: "the merge Job completed"}, true
	}
	c := condition(job, batchv1.JobFailed)
	if c == nil {
		return Outcome{}, false
	}
	if c.Reason == batchv1.JobReasonPodFailurePolicy {
		for i := len(pods) - 1; i >= 0; i-- {
			if code, ok := ExitCode(&pods[i], container); ok && code != 0 {
				return Outcome{ExitCode: code, Reason: mergeExit(code)}, true
			}
		}
		if m := failJobCode.FindStringSubmatch(c.Message); m != nil {
			code, _ := strconv.Atoi(m[1])
			return Outcome{ExitCode: int32(code), Reason: mergeExit(int32(code))}, true
		}
	}
	return Outcome{ExitCode: 1, Reason: fmt.Sprintf("the merge Job failed: %s", cmpOr(strings.TrimSpace(c.Reason+" "+c.Message), "no reason given"))}, true
}

// mergeExit says what the merge's own exit code means.
func mergeExit(code int32) string {
	switch code {
	case 1:
		return "the merge's own: an error, which its log names"
	case 2:
		return "the merge's own: it refused its arguments"
	case 99:
		return "the merge's own: a threshold failed"
	}
	return "the merge's own"
}

func condition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// LogPod is the merge pod whose log to follow: the newest one whose
// container has started (running or ended), "" while none has. A merge
// pod that was disrupted is replaced, and its replacement's log is the
// one that ends with the summary.
func LogPod(pods []corev1.Pod, container string) string {
	for i := len(pods) - 1; i >= 0; i-- {
		cs := containerStatus(&pods[i], container)
		if cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return pods[i].Name
		}
	}
	return ""
}

// Owned reports whether an object that exists already was made by
// llmload k8s for a run of this name, so that it may be reused (a claim,
// a Service) or updated (the ConfigMap): its labels say so.
func Owned(obj metav1.Object, run string) bool {
	l := obj.GetLabels()
	return l["app.kubernetes.io/name"] == "llmload" && l["app.kubernetes.io/instance"] == run
}

// MergeSummary is one line of the merge's progress, from its newest pod:
// "merge: running (waiting for the segments' results, then merging)".
func MergeSummary(pods []corev1.Pod, container string) string {
	if len(pods) == 0 {
		return "merge: no pod yet"
	}
	st, why := PodState(&pods[len(pods)-1], container)
	line := "merge: " + st.String()
	if st == Running {
		line += " (waiting for the segments' results, then merging)"
	}
	if why != "" {
		line += " (" + why + ")"
	}
	if len(pods) > 1 {
		line += fmt.Sprintf(", pod %d of %d (an earlier one was disrupted)", len(pods), len(pods))
	}
	return line
}

// Unfinished says what has not ended, for a run past its deadline:
// "segments 1 and 4 (running), the merge (running)".
func Unfinished(segs Segments, merge []corev1.Pod, container string) string {
	var parts []string
	if idx := segs.Unfinished(); len(idx) > 0 {
		var names []string
		for _, i := range idx {
			names = append(names, fmt.Sprintf("%d (%s)", i, segs.States[i]))
		}
		parts = append(parts, "segments "+strings.Join(names, ", "))
	}
	st := Unscheduled
	if len(merge) > 0 {
		st, _ = PodState(&merge[len(merge)-1], container)
	}
	return strings.Join(append(parts, fmt.Sprintf("the merge Job (its pod %s)", st)), "; ")
}
