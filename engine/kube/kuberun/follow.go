package kuberun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/llmload/llmload/engine/kube"
)

// Following's pace and bounds.
const (
	// PollEvery is how often Follow reads the pods and the merge Job:
	// often enough to see each step, rarely enough for any API server.
	PollEvery = 2 * time.Second
	// FollowSlack is how much longer than the merge's own wait Follow
	// waits for the merge Job to end: time to schedule the merge pod and
	// for the Job controller to mark it.
	FollowSlack = 2 * time.Minute
	// LogDrain bounds the wait, once the merge Job has ended, for the
	// rest of its log.
	LogDrain = 15 * time.Second
)

// Deadline is how long Follow waits for the run to end.
func Deadline(m *kube.Manifests) time.Duration { return m.Wait + FollowSlack }

// DeadlineError is a run that had not ended by its deadline.
type DeadlineError struct {
	After      time.Duration
	Unfinished string // what had not ended
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("the run had not ended %v after it was created: not finished: %s", e.After, e.Unfinished)
}

// Follow watches the run that Create made until its merge Job ends:
// a line on progress whenever the segments' or the merge's states
// change, and the merge pod's log (the merged summary) streamed to out
// as it comes. It returns the merge's outcome, a *DeadlineError past
// Deadline(m), and ctx's error when ctx ends first (the run goes on in
// the cluster).
func (c *Cluster) Follow(ctx context.Context, m *kube.Manifests, jobs *Created, out, progress io.Writer) (Outcome, error) {
	f := &follower{c: c, m: m, jobs: jobs, progress: progress, out: &lockedWriter{w: out}, streamed: map[string]bool{}}
	deadline := time.Now().Add(Deadline(m))
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	defer f.logs.Wait()
	logCtx, stopLogs := context.WithCancel(ctx)
	defer stopLogs()
	for {
		o, done, err := f.step(ctx, logCtx)
		switch {
		case err != nil:
			return Outcome{}, err
		case done:
			f.drain(stopLogs)
			return o, nil
		case time.Now().After(deadline):
			return Outcome{}, &DeadlineError{After: Deadline(m), Unfinished: f.unfinished}
		}
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// follower is one Follow's state; step is never called concurrently.
type follower struct {
	c        *Cluster
	m        *kube.Manifests
	jobs     *Created
	progress io.Writer
	out      *lockedWriter

	lastSegments, lastMerge string
	unfinished              string
	streamed                map[string]bool
	logs                    sync.WaitGroup
	failures                int // API reads failed in a row
}

// step reads the cluster once, says what changed, starts following a
// merge pod's log, and tells whether the merge Job has ended.
func (f *follower) step(ctx, logCtx context.Context) (Outcome, bool, error) {
	ns := f.m.Segments.Namespace
	pods, merge, err := f.read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, false, ctx.Err()
		}
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) {
			return Outcome{}, false, fmt.Errorf("namespace %s: %w", ns, err)
		}
		if f.failures++; f.failures == 1 {
			fmt.Fprintf(f.progress, "reading the run's state: %v (trying again every %v)\n", err, PollEvery)
		}
		return Outcome{}, false, nil
	}
	f.failures = 0
	segPods, mergePods := PodsOf(f.jobs.Segments, pods), PodsOf(f.jobs.Merge, pods)
	segs := SegmentStates(segPods, int(*f.jobs.Segments.Spec.Completions), podContainer(f.jobs.Segments))
	mc := podContainer(f.jobs.Merge)
	f.say(&f.lastSegments, segs.Summary())
	f.say(&f.lastMerge, MergeSummary(mergePods, mc))
	f.unfinished = Unfinished(segs, mergePods, mc)
	if p := LogPod(mergePods, mc); p != "" && !f.streamed[p] {
		f.streamed[p] = true
		f.logs.Add(1)
		go f.streamLog(logCtx, ns, p, mc)
	}
	o, done := MergeOutcome(merge, mergePods, mc)
	return o, done, nil
}

// read lists the run's pods and gets the merge Job.
func (f *follower) read(ctx context.Context) ([]corev1.Pod, *batchv1.Job, error) {
	ns := f.m.Segments.Namespace
	list := &corev1.PodList{}
	if err := f.c.pods().list(ctx, ns, "app.kubernetes.io/instance="+f.m.Name, list); err != nil {
		return nil, nil, err
	}
	merge := &batchv1.Job{}
	if err := f.c.jobs().get(ctx, ns, f.jobs.Merge.Name, merge); err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", f.jobs.Merge.Name, err)
	}
	return list.Items, merge, nil
}

// say prints line when it differs from the last one of its kind.
func (f *follower) say(last *string, line string) {
	if line != *last {
		*last = line
		fmt.Fprintln(f.progress, line)
	}
}

// streamLog copies a merge pod's log to out until its container ends.
func (f *follower) streamLog(ctx context.Context, ns, pod, container string) {
	defer f.logs.Done()
	rc, err := f.c.followLog(ctx, ns, pod, container)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(f.progress, "merge pod %s: its log: %v (kubectl -n %s logs %s)\n", pod, err, ns, pod)
		}
		return
	}
	defer rc.Close()
	if _, err := io.Copy(f.out, rc); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(f.progress, "merge pod %s: its log broke off: %v (kubectl -n %s logs %s)\n", pod, err, ns, pod)
	}
}

// drain waits, at most LogDrain, for the logs to end by themselves (the
// merge container has ended, so its log has), then stops them.
func (f *follower) drain(stop context.CancelFunc) {
	done := make(chan struct{})
	go func() { f.logs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(LogDrain):
		fmt.Fprintf(f.progress, "the merge log did not end within %v of the Job: kubectl -n %s logs job/%s has it whole\n",
			LogDrain, f.m.Merge.Namespace, f.m.Merge.Name)
	}
	stop()
}

// lockedWriter serializes the log streams' writes: a replaced merge pod's
// stream may still be ending as its successor's begins.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Commands are the kubectl commands to follow, or delete, a run left
// running: what to do after an interrupted Follow.
func Commands(m *kube.Manifests) []string {
	ns := m.Segments.Namespace
	return []string{
		fmt.Sprintf("kubectl -n %s get pods -l app.kubernetes.io/instance=%s", ns, m.Name),
		fmt.Sprintf("kubectl -n %s logs -f job/%s", ns, m.Merge.Name),
		fmt.Sprintf("kubectl -n %s delete job %s %s", ns, m.Segments.Name, m.Merge.Name),
	}
}
