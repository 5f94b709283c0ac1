package kubetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/ociimage"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/secrettest"
	"github.com/llmload/llmload/engine/sim"
	"github.com/llmload/llmload/engine/truth"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// The end-to-end tests run `llmload k8s` on a real cluster: the image is
// this checkout's llmload, built static and packed by engine/ociimage
// (as cmd/llmload-image does),
// imported into the node's containerd; the server is llmload mock as a
// Deployment and Service; the namespace enforces the restricted Pod
// Security profile, as a careful cluster's do.
const (
	ns      = "llmload-e2e"
	image   = "localhost/llmload:e2e"
	apiKey  = "sk-e2e-7Hq2vZpR9xLmN4cT" // the Secret's; the server demands it
	secret  = "llm-key"
	simPort = 8000
)

// e2e is what every test shares: the cluster, the binary and the image.
type e2e struct {
	c       *Cluster
	llmload string // the static binary, also run here by the tests
	dir     string
}

var prepared struct {
	once sync.Once
	e    *e2e
	err  error
}

func setup(t *testing.T) *e2e {
	t.Helper()
	c := Shared(t)
	prepared.once.Do(func() { prepared.e, prepared.err = prepare(c) })
	if prepared.err != nil {
		t.Fatal(prepared.err)
	}
	return prepared.e
}

// prepare builds and imports the image and makes the namespace and the
// Secret.
func prepare(c *Cluster) (*e2e, error) {
	dir, err := os.MkdirTemp(c.State, "e2e-")
	if err != nil {
		return nil, err
	}
	e := &e2e{c: c, llmload: filepath.Join(dir, "llmload"), dir: dir}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", e.llmload, "./cmd/llmload")
	build.Dir, build.Env = Repo(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/llmload: %v\n%s", err, out)
	}
	tar := filepath.Join(dir, "llmload.tar")
	img, err := ociimage.Build(ociimage.Spec{Binary: e.llmload, Entrypoint: []string{ociimage.DefaultPath},
		User: ociimage.DefaultUser, Certs: ociimage.CertsPath})
	if err != nil {
		return nil, err
	}
	if err := ociimage.WriteTarballFile(tar, img, image); err != nil {
		return nil, err
	}
	if err := c.Import(tar); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	namespace := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`, ns)
	if _, err := c.Kubectl(ctx, []byte(namespace), "apply", "-f", "-"); err != nil {
		return nil, err
	}
	if _, err := c.Kubectl(ctx, nil, "-n", ns, "create", "secret", "generic", secret, "--from-literal=api-key="+apiKey); err != nil {
		return nil, err
	}
	return e, nil
}

// server is a simulator Deployment and its Service; its truth log goes
// to a volume of its own, written when it stops.
type server struct {
	e        *e2e
	name     string
	truthDir string
	url      string
}

// startServer runs llmload mock in the cluster, demanding the Secret's
// key.
func (e *e2e) startServer(t *testing.T, name string) *server {
	t.Helper()
	s := &server{e: e, name: name}
	s.truthDir = e.c.Volume(t, name+"-truth")
	manifest := fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %[1]s-truth, namespace: %[2]s}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: %[1]s-truth
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 10
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: mock
        image: %[3]s
        imagePullPolicy: Never
        args: [mock, --addr, "0.0.0.0:%[4]d", --truth-log, /truth/truth.jsonl]
        env:
        - name: LLMLOAD_MOCK_API_KEY
          valueFrom: {secretKeyRef: {name: %[5]s, key: api-key}}
        ports: [{containerPort: %[4]d}]
        readinessProbe:
          httpGet: {path: /health, port: %[4]d}
          periodSeconds: 1
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts: [{name: truth, mountPath: /truth}]
      volumes: [{name: truth, persistentVolumeClaim: {claimName: %[1]s-truth}}]
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  selector: {app: %[1]s}
  ports: [{port: %[4]d, targetPort: %[4]d}]
`, name, ns, image, simPort, secret)
	e.c.MustKubectl(t, []byte(manifest), "apply", "-f", "-")
	if _, err := e.kubectlTimeout(3*time.Minute, "-n", ns, "rollout", "status", "deployment/"+name, "--timeout=3m"); err != nil {
		t.Fatalf("%v\n%s", err, e.c.Logs())
	}
	ip := strings.TrimSpace(e.c.MustKubectl(t, nil, "-n", ns, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}"))
	s.url = fmt.Sprintf("http://%s:%d/v1", ip, simPort)
	t.Cleanup(func() {
		_, _ = e.kubectlTimeout(time.Minute, "-n", ns, "delete", "deployment,service,pvc", name, name+"-truth", "--ignore-not-found", "--wait=false")
	})
	return s
}

// stop scales the server to zero, so that it writes its truth log, and
// reads the log.
func (s *server) stop(t *testing.T) []sim.TruthRecord {
	t.Helper()
	s.e.c.MustKubectl(t, nil, "-n", ns, "scale", "deployment/"+s.name, "--replicas=0")
	if _, err := s.e.kubectlTimeout(2*time.Minute, "-n", ns, "wait", "--for=delete", "pod", "-l", "app="+s.name, "--timeout=2m"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(s.truthDir, "truth.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := truth.Read(f, "truth.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func (e *e2e) kubectlTimeout(d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return e.c.Kubectl(ctx, nil, args...)
}

// run is one `llmload k8s` invocation.
type run struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// llmload runs the binary with the cluster's environment, at most d.
func (e *e2e) llmloadRun(t *testing.T, d time.Duration, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.llmload, args...)
	cmd.Dir, cmd.Env = Repo(), e.c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	r := run{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(t0)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("llmload %s: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	if ctx.Err() != nil {
		t.Fatalf("llmload %s did not end within %v\nstderr:\n%s\n%s", strings.Join(args, " "), d, r.stderr, e.c.Logs())
	}
	return r
}

// k8sArgs are the arguments of a four-segment run of the library's
// open_loop.lua, shortened, against s.
func k8sArgs(name string, s *server, extra ...string) []string {
	args := []string{"k8s", "scenarios/open_loop.lua", "--segments", "4", "--image", image,
		"--namespace", ns, "--name", name, "--target", s.url, "--secret", secret,
		"--set", "duration=3s", "--seed", "4242", "--cpu", "100m", "--memory", "64Mi"}
	return append(args, extra...)
}

// results reads the run's files from the claim's volume: the segments'
// in index order, and the merged one.
func results(t *testing.T, dir string) (segments []string, merged string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*-segment-*.json"))
	slices.Sort(files)
	m, _ := filepath.Glob(filepath.Join(dir, "*-merged.json"))
	if len(m) != 1 {
		t.Fatalf("merged results in the claim: %v", m)
	}
	return files, m[0]
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.ReadJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// keyForms are the encodings of the API key that must appear nowhere:
// as is, escaped, and base64 as a Secret's data holds it.
func keyForms() []string {
	forms := secrettest.Forms("key", apiKey, apiKey)
	return append(forms, base64.StdEncoding.EncodeToString([]byte(apiKey)))
}

func noKey(t *testing.T, what, text string) {
	t.Helper()
	if leaked := secrettest.Leaked(text, keyForms()); len(leaked) > 0 {
		t.Errorf("%s holds the API key (%d forms)", what, len(leaked))
	}
}

// TestK8sRun runs four segments and their merge on the cluster with one
// command, and holds the merge to a local `llmload merge` of the same
// files and to the server's own count; the key from the Secret reaches
// the server and nothing else; --listen makes every segment scrapable;
// --history stores the merged run in a SQLite file in the claim.
func TestK8sRun(t *testing.T) {
	e := setup(t)
	s := e.startServer(t, "sim-run")
	dir := e.c.Volume(t, "pv-run")
	printed := e.llmloadRun(t, time.Minute, k8sArgs("e2e-run", s, "--listen", "0.0.0.0:9464")...)
	if printed.code != 0 {
		t.Fatalf("llmload k8s (printing) exit %d: %s", printed.code, printed.stderr)
	}
	noKey(t, "the manifests", printed.stdout+printed.stderr)

	scraped := make(chan string, 1)
	go func() { scraped <- e.scrapeSegment("e2e-run", 5*time.Minute) }()
	r := e.llmloadRun(t, 10*time.Minute, k8sArgs("e2e-run", s, "--listen", "0.0.0.0:9464", "--run",
		"--history", "sqlite:/results/history.db", "--label", "suite=e2e")...)
	t.Logf("llmload k8s --run: exit %d in %v\nstderr:\n%s", r.code, r.took.Round(time.Second), r.stderr)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\n%s", r.code, r.stdout, e.c.Logs())
	}
	if !strings.Contains(r.stdout, "segments") && !strings.Contains(r.stdout, "merged") {
		t.Errorf("stdout is not the merged summary:\n%s", r.stdout)
	}
	if m := <-scraped; !strings.Contains(m, "llmload_") {
		t.Errorf("a segment's /metrics through the API server's proxy: %.300q", m)
	}

	segs, mergedPath := results(t, dir)
	if len(segs) != 4 {
		t.Fatalf("segment results %v, want 4", segs)
	}
	merged := readResult(t, mergedPath)
	local := filepath.Join(t.TempDir(), "local.json")
	if lr := e.llmloadRun(t, time.Minute, append(append([]string{"merge"}, segs...), "--out", local, "-q")...); lr.code != 0 {
		t.Fatalf("local merge exit %d: %s", lr.code, lr.stderr)
	}
	again := readResult(t, local)
	if got, want := summary(merged), summary(again); got != want {
		t.Errorf("the merge Job's result and a local merge of the same files differ:\n%s\n%s", got, want)
	}

	// The merge pod stored the merged run in the claim's history, labelled.
	hist := e.llmloadRun(t, time.Minute, "history", "list", "--history", "sqlite:"+filepath.Join(dir, "history.db"), "--label", "suite=e2e")
	if hist.code != 0 || strings.Count(hist.stdout, "\n") < 2 || !strings.Contains(hist.stdout, "open_loop") {
		t.Errorf("llmload history list of the claim's history: exit %d\n%s%s", hist.code, hist.stdout, hist.stderr)
	}
	t.Logf("the claim's history:\n%s", hist.stdout)

	var starts []time.Time
	var planned, lastWritten time.Time
	for _, p := range segs {
		seg := readResult(t, p)
		if seg.Run.Segment == nil {
			t.Fatalf("%s carries no segment", p)
		}
		starts = append(starts, seg.Run.Segment.ActualStart)
		planned = seg.Run.Segment.PlannedStart
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(lastWritten) {
			lastWritten = fi.ModTime()
		}
	}
	spread := slices.MaxFunc(starts, time.Time.Compare).Sub(slices.MinFunc(starts, time.Time.Compare))
	var mergeTook time.Duration
	if fi, err := os.Stat(mergedPath); err == nil {
		mergeTook = fi.ModTime().Sub(lastWritten)
	}
	// The figures README's "Beyond one machine" states.
	t.Logf("first segment pod started %v before the barrier; barrier spread %v; the merge written %v after the last segment's result",
		planned.Sub(e.firstPodStart(t, "e2e-run")).Round(time.Millisecond), spread, mergeTook.Round(time.Millisecond))
	if spread > 2*time.Second {
		t.Errorf("the segments' load started %v apart, want one instant (within 2s)", spread)
	}

	recs := s.stop(t)
	if got, want := requests(merged), duringLoad(merged, recs); got != want {
		t.Errorf("merged requests %d, the server's own count during the load %d", got, want)
	}
	for _, p := range append(segs, mergedPath) {
		data, _ := os.ReadFile(p)
		noKey(t, filepath.Base(p), string(data))
	}
	noKey(t, "llmload k8s --run's output", r.stdout+r.stderr)
	noKey(t, "the pods' logs", e.allLogs(t))
}

// summary is what two merges of the same files must agree on.
func summary(r *result.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "complete %v requests %d", r.Run.Complete, requests(r))
	for _, s := range r.Stages {
		fmt.Fprintf(&b, " | %s/%s ok %d failed %d ttft p50 %g p99 %g", s.Scenario, s.Stage, s.OK, s.Failed, s.TTFT.P50, s.TTFT.P99)
	}
	for _, th := range r.Thresholds {
		fmt.Fprintf(&b, " | %s %v", th.Expr, th.Passed)
	}
	return b.String()
}

func requests(r *result.Result) int64 {
	n := int64(0)
	for _, s := range r.Stages {
		n += s.Requests
	}
	return n
}

// duringLoad counts the server's records of requests that arrived once
// the load began, which leaves out each segment's preflight and warmup.
func duringLoad(r *result.Result, recs []sim.TruthRecord) int64 {
	from := r.Stages[0].Start
	for _, s := range r.Stages {
		if s.Start.Before(from) {
			from = s.Start
		}
	}
	n := int64(0)
	for _, rec := range recs {
		if !rec.Arrival.Before(from.Add(-50 * time.Millisecond)) {
			n++
		}
	}
	return n
}

// scrapeSegment reads a running segment's /metrics through the API
// server's pod proxy, as a Prometheus in the cluster would reach it.
func (e *e2e) scrapeSegment(name string, within time.Duration) string {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		pods, err := e.kubectlTimeout(30*time.Second, "-n", ns, "get", "pods", "-l", "job-name="+name,
			"--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].metadata.name}")
		if err == nil {
			for _, pod := range strings.Fields(pods) {
				out, err := e.kubectlTimeout(10*time.Second, "get", "--raw",
					fmt.Sprintf("/api/v1/namespaces/%s/pods/%s:9464/proxy/metrics", ns, pod))
				if err == nil && strings.Contains(out, "llmload_") {
					return out
				}
			}
		}
		time.Sleep(time.Second)
	}
	return ""
}

// allLogs is every container log in the namespace.
func (e *e2e) allLogs(t *testing.T) string {
	t.Helper()
	pods := strings.Fields(e.c.MustKubectl(t, nil, "-n", ns, "get", "pods", "-o", "jsonpath={.items[*].metadata.name}"))
	var b strings.Builder
	for _, p := range pods {
		out, _ := e.kubectlTimeout(30*time.Second, "-n", ns, "logs", p, "--all-containers")
		b.WriteString(out)
	}
	return b.String()
}

// firstPodStart is when the run's first segment pod started.
func (e *e2e) firstPodStart(t *testing.T, name string) time.Time {
	t.Helper()
	out := e.c.MustKubectl(t, nil, "-n", ns, "get", "pods", "-l", "job-name="+name, "-o", "jsonpath={.items[*].status.startTime}")
	var first time.Time
	for _, f := range strings.Fields(out) {
		if at, err := time.Parse(time.RFC3339, f); err == nil && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// diagnose is the run's pods and the merge's log, for a failing test.
func (e *e2e) diagnose(name string) string {
	pods, _ := e.kubectlTimeout(30*time.Second, "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+name, "-o", "wide")
	logs, _ := e.kubectlTimeout(30*time.Second, "-n", ns, "logs", "job/"+name+"-merge")
	return "pods:\n" + pods + "\nmerge log:\n" + logs
}

// jobStatus is the part of a Job's status the gate reads.
type jobStatus struct {
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
		}
	}
}

func (e *e2e) job(t *testing.T, name string) jobStatus {
	t.Helper()
	var j jobStatus
	out := e.c.MustKubectl(t, nil, "-n", ns, "get", "job", name, "-o", "json")
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// gateScript is the CI gate without --run that README and
// docs/distributed.md give, for a run applied by kubectl alone (from a
// GitOps repository, say): it waits for the merge Job to end either way,
// prints the merged summary and exits with the merge's code. Run name
// chat-mix, namespace load, as the docs write them.
const gateScript = `kubectl apply -f chat-mix.yaml
timeout 45m sh -c 'until kubectl -n load wait --for=condition=complete --timeout=15s job/chat-mix-merge || kubectl -n load wait --for=condition=failed --timeout=15s job/chat-mix-merge; do :; done' >/dev/null 2>&1
code=$(kubectl -n load get pods -l job-name=chat-mix-merge --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[-1:].status.containerStatuses[0].state.terminated.exitCode}'); kubectl -n load logs job/chat-mix-merge; exit "${code:-1}"
`

// TestK8sThresholdFails applies a run whose threshold cannot pass, with
// the documented gate script: the merge Job fails by its pod failure
// policy, its status names exit code 99, and the script exits 99.
func TestK8sThresholdFails(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/distributed.md"} {
		text, err := os.ReadFile(filepath.Join(Repo(), doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), gateScript) {
			t.Errorf("%s does not hold the gate script this test runs:\n%s", doc, gateScript)
		}
	}
	e := setup(t)
	s := e.startServer(t, "sim-gate")
	e.c.Volume(t, "pv-gate")
	const name = "e2e-gate"
	printed := e.llmloadRun(t, time.Minute, k8sArgs(name, s, "--set", "ttft_sched_p50=1ms")...)
	if printed.code != 0 {
		t.Fatalf("llmload k8s exit %d: %s", printed.code, printed.stderr)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "chat-mix.yaml"), []byte(printed.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	script := strings.NewReplacer("chat-mix.yaml", "chat-mix.yaml", // the file keeps its name
		"chat-mix", name, "-n load", "-n "+ns).Replace(gateScript)
	sh := exec.CommandContext(ctx, "bash", "-c", script)
	sh.Dir, sh.Env = work, e.c.Env()
	out, err := sh.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 99 {
		t.Fatalf("gate script: %v, want exit 99\n%s\n%s", err, out, e.c.Logs())
	}
	if !strings.Contains(string(out), "✗") && !strings.Contains(strings.ToLower(string(out)), "fail") {
		t.Errorf("the merge's log does not show the failed threshold:\n%s", out)
	}
	failed := false
	for _, c := range e.job(t, name+"-merge").Status.Conditions {
		if c.Type == "Failed" && c.Status == "True" {
			failed = true
			if c.Reason != "PodFailurePolicy" || !strings.Contains(c.Message, "exit code 99") {
				t.Errorf("merge Job failed with %s: %s; want the pod failure policy on exit code 99", c.Reason, c.Message)
			}
		}
	}
	if !failed {
		t.Errorf("the merge Job has not failed: %+v", e.job(t, name+"-merge"))
	}
}

// TestK8sSegmentDeleted deletes a segment's pod while the load runs: the
// merge reports the run incomplete, naming that segment, and exits 1
// within its deadline.
func TestK8sSegmentDeleted(t *testing.T) {
	e := setup(t)
	s := e.startServer(t, "sim-kill")
	dir := e.c.Volume(t, "pv-kill")
	const name = "e2e-kill"
	done := make(chan run, 1)
	go func() { done <- e.llmloadRun(t, 10*time.Minute, k8sArgs(name, s, "--set", "duration=8s", "--run")...) }()
	// Once every segment is ready and the load has begun, segment 2 goes.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ready, _ := filepath.Glob(filepath.Join(dir, "*-barrier", "ready-*"))
		if len(ready) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the segments never all became ready\n%s", e.c.Logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(6 * time.Second)
	e.c.MustKubectl(t, nil, "-n", ns, "delete", "pod", "-l", "job-name="+name+",batch.kubernetes.io/job-completion-index=2", "--wait=false")
	r := <-done
	t.Logf("llmload k8s --run: exit %d in %v\nstdout:\n%s\nstderr:\n%s", r.code, r.took.Round(time.Second), r.stdout, r.stderr)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (an incomplete run)", r.code)
	}
	if out := r.stdout + r.stderr; !strings.Contains(out, "segment 2") && !strings.Contains(out, "segment-2") {
		t.Errorf("the output does not name segment 2\n%s", e.diagnose(name))
	}
	// The run states how long it follows, and it ended well inside that.
	m := regexp.MustCompile(`following it for at most (\S+), then exit 1`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("--run did not state its deadline:\n%s", r.stderr)
	}
	if stated, err := time.ParseDuration(m[1]); err != nil || r.took > stated {
		t.Errorf("took %v, past the stated deadline %s (%v)", r.took, m[1], err)
	}
}

// TestK8sRunChecksSecrets: --run refuses, before it creates anything, a
// Secret the pods would wait for in vain: missing, or without the key
// they read (the API key's, the history DSN's).
func TestK8sRunChecksSecrets(t *testing.T) {
	e := setup(t)
	// A run of this test that was killed may have left it in a kept cluster.
	_, _ = e.kubectlTimeout(30*time.Second, "-n", ns, "delete", "secret", "hist-wrong-key", "--ignore-not-found")
	e.c.MustKubectl(t, nil, "-n", ns, "create", "secret", "generic", "hist-wrong-key", "--from-literal=dsn=postgres://u:hunter2@db/x")
	t.Cleanup(func() {
		_, _ = e.kubectlTimeout(30*time.Second, "-n", ns, "delete", "secret", "hist-wrong-key", "--ignore-not-found")
	})
	const name = "e2e-secrets"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no API key Secret", []string{"--secret", "no-such-key"},
			"--secret no-such-key: no such Secret in namespace " + ns + "; create it first: kubectl -n " + ns + " create secret generic no-such-key --from-literal=api-key=..."},
		{"no history Secret", []string{"--secret", secret, "--history-secret", "no-such-history"},
			"--history-secret no-such-history: no such Secret in namespace " + ns + "; create it first: kubectl -n " + ns + " create secret generic no-such-history --from-literal=history=..."},
		{"history Secret without its key", []string{"--secret", secret, "--history-secret", "hist-wrong-key"},
			"--history-secret hist-wrong-key: the Secret has no key history (its keys: dsn)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"k8s", "scenarios/open_loop.lua", "--segments", "2", "--image", image, "--namespace", ns, "--name", name,
				"--target", "http://127.0.0.1:1/v1", "--set", "duration=3s", "--seed", "4242", "--run"}, tt.args...)
			r := e.llmloadRun(t, time.Minute, args...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", r.code, r.stderr, tt.want)
			}
			if strings.Contains(r.stdout+r.stderr, "hunter2") {
				t.Errorf("a Secret's value was read out:\n%s", r.stderr)
			}
			out, err := e.kubectlTimeout(30*time.Second, "-n", ns, "get", "job,configmap", "-l", "app.kubernetes.io/instance="+name, "-o", "name")
			if err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("objects created before the check failed: %q (%v)", out, err)
			}
		})
	}
}
