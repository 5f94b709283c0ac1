// Package kubetest starts a real single-node Kubernetes cluster for tests:
// .ci/kube.sh's etcd, control plane, containerd and kubelet, in network,
// PID and mount namespaces of the cluster's own, with the API server
// forwarded to a port on 127.0.0.1. A package's tests share one cluster
// (Shared), which its TestMain stops.
package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is a running cluster.
type Cluster struct {
	// State is the cluster's directory: its certificates, logs, etcd and
	// containerd data, and the volumes' host directories (Volume).
	State string
	// Kubeconfig is an admin kubeconfig for the API server's forwarded
	// port on 127.0.0.1.
	Kubeconfig string
	// Bin holds kubectl and the cluster's other binaries.
	Bin string
	// Netns is the cluster's network namespace.
	Netns string
	// Started is how long the cluster took to be Ready.
	Started time.Duration
}

// Repo returns the repository's root: the directory of this file's
// module.
func Repo() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func script() string { return filepath.Join(Repo(), ".ci", "kube.sh") }

// Bin returns the directory of the cluster's binaries: LLMLOAD_KUBE_BIN,
// else where .ci/kube.sh build puts them; "" and the reason when they are
// not built.
func Bin() (string, error) {
	if dir := os.Getenv("LLMLOAD_KUBE_BIN"); dir != "" {
		return dir, checkBin(dir)
	}
	out, err := exec.Command("bash", "-c", `. <(sed -n '/^KUBE_VERSION=/p;/^CACHE=/p;/^BIN=/p' "$0"); echo "$BIN"`, script()).Output()
	if err != nil {
		return "", fmt.Errorf("reading the cache directory from %s: %v", script(), err)
	}
	dir := strings.TrimSpace(string(out))
	return dir, checkBin(dir)
}

func checkBin(dir string) error {
	for _, b := range []string{"kube-apiserver", "kubelet", "kubectl", "etcd", "pause.tar"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("%s is missing", filepath.Join(dir, b))
		}
	}
	return nil
}

// skipOrFail skips the test with how to get a cluster, or fails it under
// CI=true, where .ci/run builds everything a cluster needs.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("no cluster: %s (.ci/run builds the binaries with .ci/kube.sh build and runs as root)", why)
	}
	t.Skipf("no cluster: %s; run .ci/kube.sh build (about 10 minutes on 2 cores, once per machine) as root, or set LLMLOAD_KUBE_BIN", why)
}

var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// Shared returns the package's cluster, starting it on first use; a
// cluster that failed to start fails every test that asks for it. It
// skips the test (fails it under CI=true) where no cluster can run.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Kubernetes cluster")
	}
	if os.Getuid() != 0 {
		skipOrFail(t, "not root")
	}
	bin, err := Bin()
	if err != nil {
		skipOrFail(t, err.Error())
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		shared.c, shared.err = start(bin)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

// StopShared stops the package's cluster, if one started; for TestMain.
// A test binary that is killed instead leaves it to the watchdog that
// .ci/kube.sh up starts, which stops the cluster when this process ends.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		shared.c.Stop()
		shared.c = nil
	}
}

// start runs .ci/kube.sh up in a new state directory, owned by this
// process.
func start(bin string) (*Cluster, error) {
	state, err := os.MkdirTemp("", "llmload-kube-")
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script(), "up", state, fmt.Sprint(os.Getpid()))
	cmd.Env = append(os.Environ(), "LLMLOAD_KUBE_BIN="+bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		_ = exec.Command("bash", script(), "down", state).Run()
		return nil, fmt.Errorf("starting the cluster: %v\n%s", err, stderr.String())
	}
	c := &Cluster{State: state, Bin: bin, Started: time.Since(t0)}
	for _, line := range strings.Split(stdout.String(), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "KUBECONFIG":
			c.Kubeconfig = v
		case "LLMLOAD_KUBE_NETNS":
			c.Netns = v
		}
	}
	if c.Kubeconfig == "" {
		c.Stop()
		return nil, fmt.Errorf("kube.sh up printed no KUBECONFIG:\n%s", stdout.String())
	}
	return c, nil
}

// Stop tears the cluster down and removes its state.
func (c *Cluster) Stop() {
	_ = exec.Command("bash", script(), "down", c.State).Run()
}

// Env is the environment for kubectl and llmload k8s --run against the
// cluster: the process's own with KUBECONFIG set and the cluster's
// binaries first on PATH.
func (c *Cluster) Env() []string {
	env := []string{"KUBECONFIG=" + c.Kubeconfig}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "KUBECONFIG="):
		case strings.HasPrefix(kv, "PATH="):
			env = append(env, "PATH="+c.Bin+string(os.PathListSeparator)+kv[len("PATH="):])
		default:
			env = append(env, kv)
		}
	}
	return env
}

// Kubectl runs kubectl against the cluster and returns its stdout; the
// error holds its stderr.
func (c *Cluster) Kubectl(ctx context.Context, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "kubectl"), args...)
	cmd.Env = c.Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), err
}

// MustKubectl is Kubectl that fails the test on error.
func (c *Cluster) MustKubectl(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := c.Kubectl(ctx, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Import loads an image tarball (docker-archive or OCI) into the node's
// containerd, where pods find it without a registry.
func (c *Cluster) Import(tar string) error {
	out, err := exec.Command("ctr", "--address", filepath.Join(c.State, "containerd", "containerd.sock"),
		"-n", "k8s.io", "images", "import", tar).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %v: %s", tar, err, out)
	}
	return nil
}

// Volume makes a ReadWriteMany PersistentVolume of the node's directory
// under State/pv, for one claim to bind (it carries no storage class, as
// a claim of the cluster's default class does here: the cluster has
// none). It returns the directory, where the test reads what the pods
// wrote. The pods' user owns nothing there: the directory is writable to
// all, as an NFS export for several users would be.
func (c *Cluster) Volume(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(c.State, "pv", name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	pv := fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: %q, type: Directory}
`, name, dir)
	c.MustKubectl(t, []byte(pv), "apply", "-f", "-")
	return dir
}

// Logs returns the cluster components' logs, for a failing test.
func (c *Cluster) Logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.State, "logs", "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "== %s (last lines)\n%s\n", filepath.Base(f), strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return b.String()
}
