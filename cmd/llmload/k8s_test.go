package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/llmload/llmload/engine/kube"
)

// k8sScenario is a tiny scenario with a data file and a parameter, so the
// ConfigMap's items, --set and the merged gate all take part.
const k8sScenario = `
local llm = require("llmload")
local prompts = llm.pool.text("data/prompts.txt")
options = {
  scenarios = { load = { executor = "constant-vus", exec = "chat", vus = tonumber(llm.param("vus", "2")), duration = "1s" } },
  thresholds = { ["errors.rate"] = "< 1%" },
}
function chat() llm.chat { messages = { { role = "user", content = prompts:next() } }, max_tokens = 8 } end
`

// k8sScenarioDir writes the scenario beside its data and returns its path.
func k8sScenarioDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "data", "prompts.txt"), "hello\nhow are you?\n")
	path := filepath.Join(dir, "tiny_k8s.lua")
	writeTestFile(t, path, k8sScenario)
	return path
}

func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// k8sManifests is the decoded output of llmload k8s.
type k8sManifests struct {
	configMap        corev1.ConfigMap
	claims           []corev1.PersistentVolumeClaim
	services         []corev1.Service
	segments, merges batchv1.Job
}

// decodeK8s decodes every document strictly (unknown fields refused).
func decodeK8s(t *testing.T, stream string) k8sManifests {
	t.Helper()
	var m k8sManifests
	parts := strings.Split(stream, "\n---\n")
	for _, part := range parts[1:] {
		var head struct {
			Kind     string
			Metadata struct{ Labels map[string]string }
		}
		if err := yaml.Unmarshal([]byte(part), &head); err != nil {
			t.Fatal(err)
		}
		var into any
		switch comp := head.Metadata.Labels["app.kubernetes.io/component"]; {
		case head.Kind == "ConfigMap":
			into = &m.configMap
		case head.Kind == "PersistentVolumeClaim":
			m.claims = append(m.claims, corev1.PersistentVolumeClaim{})
			into = &m.claims[len(m.claims)-1]
		case head.Kind == "Service":
			m.services = append(m.services, corev1.Service{})
			into = &m.services[len(m.services)-1]
		case head.Kind == "Job" && comp == "segment":
			into = &m.segments
		case head.Kind == "Job" && comp == "merge":
			into = &m.merges
		default:
			t.Fatalf("unexpected document %s/%s", head.Kind, comp)
		}
		if err := yaml.UnmarshalStrict([]byte(part), into); err != nil {
			t.Fatalf("strict decode of %s: %v", head.Kind, err)
		}
	}
	return m
}

func TestK8sCommand(t *testing.T) {
	path := k8sScenarioDir(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"k8s", path, "--segments", "3", "--image", "reg.example.com/llmload:1.0", "--namespace", "load",
		"--secret", "llm-key", "--target", "http://vllm.inference:8000/v1", "--model", "m", "--set", "vus=6",
		"--seed", "77", "--start-in", "90s", "--storage-class", "nfs", "--cpu", "1", "--memory-limit", "1Gi"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	m := decodeK8s(t, stdout.String())
	c := m.segments.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run /scenario/tiny_k8s.lua --segment $(JOB_COMPLETION_INDEX)/3 --start-at ", "--seed 77", "--set vus=6"} {
		if !strings.Contains(args, want) {
			t.Errorf("segment args %q lack %q", args, want)
		}
	}
	if got := m.configMap.Data["data_prompts.txt"]; got != "hello\nhow are you?\n" {
		t.Errorf("ConfigMap data file = %q", got)
	}
	if len(m.claims) != 1 || *m.claims[0].Spec.StorageClassName != "nfs" || m.configMap.Namespace != "load" {
		t.Errorf("claims %+v, namespace %q", m.claims, m.configMap.Namespace)
	}
	if cpu, mem := c.Resources.Requests.Cpu().String(), c.Resources.Limits.Memory().String(); cpu != "1" || mem != "1Gi" {
		t.Errorf("cpu request %s, memory limit %s; want 1 and 1Gi", cpu, mem)
	}
	for _, want := range []string{"tiny_k8s.lua in 3 segments, seed 77", "create secret generic llm-key", "logs -f job/tiny-k8s-merge"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestK8sHistory: the merge Job stores the merged run, with the labels
// given and the CI labels of the shell llmload k8s runs in (the pod has
// none of its own); a PostgreSQL DSN comes from a Secret; LLMLOAD_HISTORY
// set here, which the cluster never sees, is warned about.
func TestK8sHistory(t *testing.T) {
	path := k8sScenarioDir(t)
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_SHA", "0123abc")
	t.Setenv("GITHUB_REF_NAME", "main")
	t.Setenv("LLMLOAD_HISTORY", "sqlite:/tmp/local.db")
	base := []string{"k8s", path, "--segments", "2", "--image", "llmload:1", "--seed", "5"}
	tests := []struct {
		name      string
		args      []string
		wantArgs  []string
		wantEnv   string
		wantErr   []string
		unwantErr string
	}{
		{"sqlite in the claim", []string{"--history", "sqlite:/results/history.db", "--label", "team=search"},
			[]string{"--history sqlite:/results/history.db", "--label branch=main --label ci=github --label commit=0123abc", "--label team=search"}, "",
			nil, "LLMLOAD_HISTORY is set here"},
		{"a Secret's DSN", []string{"--history-secret", "hist"},
			[]string{"--label branch=main --label ci=github --label commit=0123abc"}, "LLMLOAD_HISTORY=hist/history",
			[]string{"create secret generic hist --from-literal=history=postgres://"}, "LLMLOAD_HISTORY is set here"},
		{"no store", nil, nil, "",
			[]string{"warning: LLMLOAD_HISTORY is set here, but the merge runs in the cluster and does not see it"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append(base, tt.args...), &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			m := decodeK8s(t, stdout.String())
			merge := m.merges.Spec.Template.Spec.Containers[0]
			args := strings.Join(merge.Args, " ")
			for _, want := range tt.wantArgs {
				if !strings.Contains(args, want) {
					t.Errorf("merge args %q lack %q", args, want)
				}
			}
			if tt.wantArgs == nil && (strings.Contains(args, "--history") || strings.Contains(args, "--label")) {
				t.Errorf("merge args %q store the run, with no store given", args)
			}
			var env []string
			for _, e := range merge.Env {
				env = append(env, e.Name+"="+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
			}
			if got := strings.Join(env, " "); got != tt.wantEnv {
				t.Errorf("merge env %q, want %q", got, tt.wantEnv)
			}
			if seg := strings.Join(m.segments.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(seg, "--history") || strings.Contains(seg, "--label") {
				t.Errorf("segment args %q: only the merged run is stored", seg)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			if tt.unwantErr != "" && strings.Contains(stderr.String(), tt.unwantErr) {
				t.Errorf("stderr has %q:\n%s", tt.unwantErr, stderr.String())
			}
			if strings.Contains(stdout.String(), "/tmp/local.db") {
				t.Errorf("the manifests carry this shell's LLMLOAD_HISTORY")
			}
		})
	}
}

// TestK8sSeedPicked: without --seed one seed is picked, printed, and
// given to every segment.
func TestK8sSeedPicked(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"k8s", k8sScenarioDir(t), "--segments", "2", "--image", "llmload:1"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	printed := regexp.MustCompile(`seed (\d+)`).FindStringSubmatch(stderr.String())
	args := strings.Join(decodeK8s(t, stdout.String()).segments.Spec.Template.Spec.Containers[0].Args, " ")
	if printed == nil || !regexp.MustCompile(`--seed `+printed[1]+`( |$)`).MatchString(args) {
		t.Errorf("stderr %q, args %q: want the printed seed in the args", stderr.String(), args)
	}
	if !strings.Contains(stderr.String(), "built-in simulator") {
		t.Errorf("no warning that the pods would load their own simulators:\n%s", stderr.String())
	}
}

// TestK8sReadinessBarrier: by default the segments start when all are
// ready, so the manifests name no instant and may be applied any time.
func TestK8sReadinessBarrier(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"k8s", k8sScenarioDir(t), "--segments", "2", "--image", "llmload:1", "--name", "nightly", "--ready-timeout", "3m"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	m := decodeK8s(t, stdout.String())
	seg := strings.Join(m.segments.Spec.Template.Spec.Containers[0].Args, " ")
	merge := strings.Join(m.merges.Spec.Template.Spec.Containers[0].Args, " ")
	barrier := regexp.MustCompile(`--barrier (/results/nightly-\d{8}-\d{6}-barrier) --barrier-timeout 3m0s`).FindStringSubmatch(seg)
	if barrier == nil || strings.Contains(seg, "--start-at") {
		t.Fatalf("segment args %q: want --barrier /results/nightly-DATE-TIME-barrier --barrier-timeout 3m0s and no --start-at", seg)
	}
	if !strings.Contains(merge, "--barrier "+barrier[1]+" ") {
		t.Errorf("merge args %q do not watch the barrier %s", merge, barrier[1])
	}
	for _, want := range []string{"the load starts when all 2 pods are ready, at most 3m0s after the first is"} {
		if !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "apply before then") {
			t.Errorf("stderr lacks %q, or names a deadline to apply by:\n%s", want, stderr.String())
		}
	}
}

// TestK8sExportAndListen: --export and --listen reach every segment, and
// --listen makes the pods scrapeable.
func TestK8sExportAndListen(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"k8s", k8sScenarioDir(t), "--segments", "2", "--image", "llmload:1",
		"--export", "prometheus-rw=http://prometheus.monitoring:9090/api/v1/write,native", "--listen", "127.0.0.1:9464"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	m := decodeK8s(t, stdout.String())
	c := m.segments.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if want := "--export prometheus-rw=http://prometheus.monitoring:9090/api/v1/write,native --listen :9464"; !strings.Contains(args, want) {
		t.Errorf("segment args %q lack %q", args, want)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9464 {
		t.Errorf("ports %+v", c.Ports)
	}
	if a := m.segments.Spec.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9464" {
		t.Errorf("pod annotations %v", a)
	}
	if len(m.services) != 1 || m.services[0].Name != "tiny-k8s-metrics" || m.services[0].Spec.ClusterIP != "None" {
		t.Errorf("services %+v: want the headless tiny-k8s-metrics", m.services)
	}
	for _, want := range []string{"the segments listen on :9464", "Service tiny-k8s-metrics"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestK8sRunErrors: --run's kubeconfig problems are named before anything
// is made.
func TestK8sRunErrors(t *testing.T) {
	path := k8sScenarioDir(t)
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	missing := filepath.Join(dir, "no-such-kubeconfig")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing kubeconfig", []string{"--kubeconfig", missing}, "--kubeconfig " + missing + ": no such file or directory"},
		{"no kubeconfig", nil, "no cluster to run on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"k8s", path, "--segments", "2", "--image", "llmload:1", "--run"}, tt.args...), &stdout, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), tt.want) || stdout.Len() > 0 {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, nothing on stdout, and %q", code, stdout.String(), stderr.String(), tt.want)
			}
		})
	}
}

func TestK8sUsageErrors(t *testing.T) {
	path := k8sScenarioDir(t)
	ok := []string{"--segments", "2", "--image", "llmload:1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no segments", []string{"--image", "llmload:1"}, "--segments N is required"},
		{"no image", []string{"--segments", "2"}, "--image IMAGE is required"},
		{"zero segments", []string{"--segments", "0", "--image", "llmload:1"}, "--segments 0: want 1 to 10000"},
		{"too many segments", []string{"--segments", "10001", "--image", "llmload:1"}, "--segments 10001: want 1 to 10000"},
		{"more segments than VUs", []string{"--segments", "3", "--image", "llmload:1"}, "--segments 3: segment 2/3 gets no VU of this plan"},
		{"bad image", []string{"--segments", "2", "--image", "LLMLoad:1"}, `--image "LLMLoad:1" is not an image reference`},
		{"bad name", append(ok, "--name", "Nightly_Run"), `--name "Nightly_Run": want a DNS-1123 label`},
		{"bad namespace", append(ok, "--namespace", "Load"), `--namespace "Load"`},
		{"credentials in target", append(ok, "--target", "https://user:hunter2@h/v1"), "--target \"https://h/v1\" carries credentials"},
		{"pvc and class", append(ok, "--pvc", "mine", "--storage-class", "nfs"), `--pvc claim "mine" exists already`},
		{"start-in 0", append(ok, "--start-in", "0s"), "--start-in 0s"},
		{"ready-timeout 0", append(ok, "--ready-timeout", "0s"), "--ready-timeout 0s: want a wait above 0 and at most 24h0m0s"},
		{"ready-timeout negative", append(ok, "--ready-timeout", "-1s"), "--ready-timeout -1s: want a wait above 0"},
		{"ready-timeout over a day", append(ok, "--ready-timeout", "25h"), "--ready-timeout 25h0m0s: want a wait above 0 and at most 24h0m0s"},
		{"ready-timeout and start-in", append(ok, "--ready-timeout", "5m", "--start-in", "2m"), "--ready-timeout is the readiness barrier's, and --start-in sets a fixed one"},
		{"export without =", append(ok, "--export", "http://prom:9090/api/v1/write"), "k8s: --export http://prom:9090/api/v1/write: want KIND=URL"},
		{"export unknown kind", append(ok, "--export", "statsd=http://h"), `k8s: --export statsd=...: unknown kind "statsd"`},
		{"export not http", append(ok, "--export", "otlp=grpc://otel:4317"), "k8s: --export otlp="},
		{"export with credentials", append(ok, "--export", "prometheus-rw=https://user:hunter2@prom/api/v1/write"),
			`--export prometheus-rw="https://prom/api/v1/write" carries credentials, which would be stored in plain text in the manifests`},
		{"export with a token", append(ok, "--export", "otlp=https://otel/v1/metrics?api_key=hunter2"), "give the receiver's credentials as a header instead"},
		{"export twice", append(ok, "--export", "otlp=http://a", "--export", "otlp=http://b"), "--export otlp given twice"},
		{"listen without port", append(ok, "--listen", "9464"), "k8s: --listen 9464: want host:port or :port"},
		{"listen port 0", append(ok, "--listen", ":0"), `--listen ":0": the port must be a number from 1 to 65535`},
		{"listen bad port", append(ok, "--listen", ":http"), "k8s: --listen :http: port \"http\" is not a number"},
		{"kubeconfig without --run", append(ok, "--kubeconfig", "/etc/kube.conf"), "--kubeconfig applies only with --run"},
		{"context without --run", append(ok, "--context", "prod"), "--context applies only with --run"},
		{"bad quantity", append(ok, "--memory", "lots"), `--memory "lots": want a positive Kubernetes quantity`},
		{"limit below request", append(ok, "--memory", "2Gi", "--memory-limit", "1Gi"), "--memory-limit 1Gi is below the memory request 2Gi"},
		{"history in postgres", append(ok, "--history", "postgres://u:hunter2@db/llmload"),
			`--history "postgres://db/llmload": a PostgreSQL DSN would stand in the manifests in plain text, password and all: put it in a Secret (kubectl create secret generic NAME --from-literal=history=postgres://...) and name it with --history-secret NAME`},
		{"history outside the claim", append(ok, "--history", "sqlite:history.db"), "name a file there, e.g. sqlite:/results/history.db"},
		{"history not a DSN", append(ok, "--history", "history.db"), "k8s: --history: history: bad DSN"},
		{"history in memory", append(ok, "--history", "sqlite::memory:"), "an in-memory database keeps nothing"},
		{"two histories", append(ok, "--history", "sqlite:/results/h.db", "--history-secret", "hist"), "--history-secret and --history both name a store"},
		{"bad history secret", append(ok, "--history-secret", "Hist"), `--history-secret "Hist"`},
		{"label without a history", append(ok, "--label", "team=search"), "--label has no effect without --history sqlite:FILE or --history-secret NAME"},
		{"label not key=value", append(ok, "--history", "sqlite:/results/h.db", "--label", "team"), `--label "team": want key=value`},
		{"label twice", append(ok, "--history", "sqlite:/results/h.db", "--label", "a=1", "--label", "a=2"), "--label: a given twice"},
		{"unknown set", append(ok, "--set", "nope=1"), "nope"},
		{"two scenarios", append(ok, path), "expected one SCENARIO.lua, got 2 arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"k8s", path}, tt.args...), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "hunter2") || stdout.Len() > 0 {
				t.Errorf("stdout %q; stderr repeats a credential or manifests were printed", stdout.String())
			}
		})
	}
}

func TestK8sDataErrors(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "shared.txt")
	writeTestFile(t, outside, "hi\n")
	scn := filepath.Join(dir, "scn")
	if err := os.MkdirAll(scn, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(scn, "big.txt"), strings.Repeat("a prompt of some length\n", 50000))
	tests := []struct{ name, load, want string }{
		{"outside", `llm.pool.text("../shared.txt")`, "data file " + outside + " is outside the scenario's directory"},
		{"too big", `llm.pool.text("big.txt")`, "over the 1.0 MiB one ConfigMap may hold; the biggest: big.txt (1.1 MiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(scn, strings.ReplaceAll(tt.name, " ", "_")+".lua")
			writeTestFile(t, path, "local llm = require('llmload')\nlocal p = "+tt.load+
				"\noptions = { vus = 2, duration = '1s' }\nfunction iteration() end\n")
			var stdout, stderr bytes.Buffer
			code := run([]string{"k8s", path, "--segments", "2", "--image", "llmload:1"}, &stdout, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), tt.want) || stdout.Len() > 0 {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q, and nothing printed", code, stderr.String(), tt.want)
			}
		})
	}
}

// TestK8sPodArgsRunLocally takes the manifests' own command lines — each
// segment pod's, with $(JOB_COMPLETION_INDEX) expanded as the kubelet
// does, then the merge pod's — and runs them through the real binary
// against the built-in simulator, with /scenario and /results moved to
// temporary directories: what the pods would run, llmload accepts, with
// the readiness barrier and with a fixed one.
func TestK8sPodArgsRunLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run skipped in -short mode")
	}
	for _, tc := range []struct {
		name    string
		barrier []string
		fixed   bool // --start-at in the segments' args
	}{
		{"readiness barrier", []string{"--ready-timeout", "1m"}, false},
		{"fixed barrier", []string{"--start-in", "3s"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"k8s", k8sScenarioDir(t), "--segments", "2", "--image", "llmload:test", "--set", "vus=3"}, tc.barrier...)
			stdout, stderr, code := runBinary(t, nil, args...)
			if code != exitOK {
				t.Fatalf("llmload k8s: exit %d\n%s", code, stderr)
			}
			m := decodeK8s(t, stdout)
			root := t.TempDir()
			dirs := map[string]string{kube.ScenarioDir: filepath.Join(root, "scenario"), kube.ResultsDir: filepath.Join(root, "results")}
			materialize(t, m.configMap, m.segments.Spec.Template.Spec.Volumes[0].ConfigMap.Items, dirs[kube.ScenarioDir])
			if err := os.MkdirAll(dirs[kube.ResultsDir], 0o755); err != nil {
				t.Fatal(err)
			}
			runSegments(t, m.segments, dirs)
			merge := m.merges.Spec.Template.Spec.Containers[0]
			out, errOut, code := runBinary(t, nil, podArgs(merge, nil, dirs)...)
			if code != exitOK {
				t.Fatalf("the merge Job's args %q: exit %d\nstdout:\n%s\nstderr:\n%s", merge.Args, code, out, errOut)
			}
			startAt := ""
			if tc.fixed {
				startAt = startAtArg(t, m.segments)
			}
			checkMerged(t, mergedPath(merge, dirs), startAt, 2)
		})
	}
}

// startAtArg is the barrier the segment Job's args name.
func startAtArg(t *testing.T, job batchv1.Job) string {
	t.Helper()
	args := job.Spec.Template.Spec.Containers[0].Args
	for i, a := range args {
		if a == "--start-at" && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("no --start-at in %q", args)
	return ""
}

// runSegments runs every segment pod's command at once, as the Indexed
// Job does, and fails naming the args any of them refused.
func runSegments(t *testing.T, job batchv1.Job, dirs map[string]string) {
	t.Helper()
	c := job.Spec.Template.Spec.Containers[0]
	n := int(*job.Spec.Completions)
	type outcome struct {
		args           []string
		stdout, stderr string
		code           int
	}
	results := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i)}
			args := podArgs(c, env, dirs)
			o, e, code := runPod(args, podEnvOf(c, env))
			results[i] = outcome{args, o, e, code}
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != exitOK {
			t.Fatalf("segment %d: the Job's args %q: exit %d (llmload run must accept --segment, --start-at, --out, -q, --seed and --set as written)\nstdout:\n%s\nstderr:\n%s",
				i, r.args, r.code, r.stdout, r.stderr)
		}
	}
}

// runPod runs the binary; it may be called from several goroutines.
func runPod(args, env []string) (string, string, int) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		return "", err.Error(), -1
	}
	return stdout.String(), stderr.String(), 0
}

// podArgs are a container's args as the kubelet hands them to the
// entrypoint, with the pod's mount points moved to local directories.
func podArgs(c corev1.Container, env map[string]string, dirs map[string]string) []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		a = expandK8s(a, env)
		for mount, local := range dirs {
			if rest, ok := strings.CutPrefix(a, mount+"/"); ok {
				a = filepath.Join(local, rest)
			}
		}
		out[i] = a
	}
	return out
}

// podEnvOf is the container's plain env values, expanded.
func podEnvOf(c corev1.Container, env map[string]string) []string {
	var out []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			out = append(out, e.Name+"="+expandK8s(e.Value, env))
		}
	}
	return out
}

// expandK8s expands $(NAME) from env and $$ to $, as Kubernetes does in
// args and env values; an unknown $(NAME) stays as written.
func expandK8s(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if v, ok := env[s[i+2:i+max(end, 2)]]; end > 0 && ok {
				b.WriteString(v)
				i += end
				continue
			}
			b.WriteByte('$')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func TestExpandK8s(t *testing.T) {
	env := map[string]string{"I": "3"}
	for in, want := range map[string]string{"a-$(I).json": "a-3.json", "$$(I)": "$(I)", "$(J)": "$(J)", "5$": "5$", "$$$(I)": "$3"} {
		if got := expandK8s(in, env); got != want {
			t.Errorf("expandK8s(%q) = %q, want %q", in, got, want)
		}
	}
}

// materialize writes a ConfigMap volume's files as the kubelet would.
func materialize(t *testing.T, cm corev1.ConfigMap, items []corev1.KeyToPath, dir string) {
	t.Helper()
	for _, it := range items {
		data, ok := []byte(cm.Data[it.Key]), true
		if _, text := cm.Data[it.Key]; !text {
			data, ok = cm.BinaryData[it.Key]
		}
		if !ok {
			t.Fatalf("item %s names no key of the ConfigMap", it.Key)
		}
		path := filepath.Join(dir, filepath.FromSlash(it.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
}

// mergedPath is the merge's --out, moved as podArgs moves it.
func mergedPath(c corev1.Container, dirs map[string]string) string {
	args := podArgs(c, nil, dirs)
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// checkMerged reads the merged result: whole, of n segments that all
// waited for the barrier startAt ("" any one instant, the same for all).
func checkMerged(t *testing.T, path, startAt string, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the merged result: %v", err)
	}
	var res struct {
		Run struct {
			Complete bool
			Segments []struct {
				PlannedStart string `json:"planned_start"`
			}
		}
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Run.Complete || len(res.Run.Segments) != n {
		t.Errorf("merged result: complete %v, %d segments; want complete, %d", res.Run.Complete, len(res.Run.Segments), n)
	}
	if startAt == "" && len(res.Run.Segments) > 0 {
		startAt = res.Run.Segments[0].PlannedStart
	}
	for i, seg := range res.Run.Segments {
		if seg.PlannedStart != startAt || seg.PlannedStart == "" {
			t.Errorf("segment %d planned to start at %q, want the manifest's --start-at %s", i, seg.PlannedStart, startAt)
		}
	}
}
