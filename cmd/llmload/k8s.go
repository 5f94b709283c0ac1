package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/kube"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind"
)

const k8sUsage = `Usage: llmload k8s [flags] SCENARIO.lua --segments N --image IMAGE

Prints Kubernetes manifests that run the scenario as N segments at once, one
pod each ('llmload run --segment i/N'), all starting their load at one
wall-clock time, and a Job that merges their results: apply them with one
'kubectl apply -f'. The merge Job's log is the merged summary; its exit
code is the gate (0 passed, 1 error, 99 a threshold failed).

The scenario and the data files it loads go in a ConfigMap (1 MiB at most);
the results in a ReadWriteMany PersistentVolumeClaim. The API key never
goes in the manifests: put it in a Secret and name it with --secret:
  kubectl create secret generic NAME --from-literal=api-key=...

Flags:
`

// k8sFlags are the parsed flags of 'llmload k8s'.
type k8sFlags struct {
	spec                  kube.Spec
	sets                  []string
	cpu, memory           string
	cpuLimit, memoryLimit string
	storageSize           string
	segmentsSet           bool
}

func parseK8sFlags(args []string, stderr io.Writer) (*k8sFlags, string, error) {
	var f k8sFlags
	s := &f.spec
	fs := pflag.NewFlagSet("k8s", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, k8sUsage+fs.FlagUsages()) }
	fs.IntVar(&s.Segments, "segments", 0, fmt.Sprintf("how many pods share the load (1 to %d); required", plan.MaxSegments))
	fs.StringVar(&s.Image, "image", "", "the llmload image (built from deploy/Dockerfile), e.g. registry.example.com/llmload:0.1.0; required")
	fs.StringVar(&s.Namespace, "namespace", kube.DefaultNamespace, "namespace of every object")
	fs.StringVar(&s.Secret, "secret", "", "Secret whose key api-key is the API key (LLMLOAD_API_KEY); none: no key")
	fs.StringVar(&s.Name, "name", "", fmt.Sprintf("run name, a DNS-1123 label of at most %d characters (default: from the scenario's file name)", kube.MaxNameLength))
	fs.DurationVar(&s.StartIn, "start-in", kube.DefaultStartIn, "the load starts this long after the manifests are made (--start-at of every segment)")
	fs.StringVar(&s.Claim, "pvc", "", "an existing ReadWriteMany PersistentVolumeClaim for the results (default: make NAME-results)")
	fs.StringVar(&s.StorageClass, "storage-class", "", "storage class of the claim made for the results; it must offer ReadWriteMany (default: the cluster's)")
	fs.StringVar(&f.storageSize, "storage-size", "", "size of the claim made for the results (default: from the plan, at least 1Gi)")
	fs.StringVar(&s.Target, "target", "", "base URL the pods load, as seen from the cluster (LLMLOAD_BASE_URL); no credentials in it")
	fs.StringVar(&s.Model, "model", "", "model name (LLMLOAD_MODEL)")
	fs.StringArrayVar(&f.sets, "set", nil, "set a script parameter in every segment, key=value; repeatable")
	fs.Int64Var(&s.Seed, "seed", 0, "run seed, one for all segments (0: the script's options.seed, else one picked now and printed)")
	fs.StringVar(&f.cpu, "cpu", "", "CPU request of a segment pod, e.g. 2 or 1500m (default: from the plan's VUs and rate)")
	fs.StringVar(&f.memory, "memory", "", "memory request of a segment pod, e.g. 2Gi (default: from the plan's VUs and data)")
	fs.StringVar(&f.cpuLimit, "cpu-limit", "", "CPU limit of a segment pod (default: none, since throttling distorts latency)")
	fs.StringVar(&f.memoryLimit, "memory-limit", "", "memory limit of a segment pod (default: twice the request)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, "", errHelp
		}
		return nil, "", usagef("k8s: %v", err)
	}
	if fs.NArg() != 1 {
		return nil, "", usagef("k8s: expected one SCENARIO.lua, got %s", arguments(fs.NArg()))
	}
	f.segmentsSet = fs.Changed("segments")
	return &f, fs.Arg(0), f.parseQuantities()
}

// parseQuantities reads the sizing flags into the Spec.
func (f *k8sFlags) parseQuantities() error {
	for _, q := range []struct {
		flag, value string
		into        *resource.Quantity
	}{
		{"cpu", f.cpu, &f.spec.Resources.CPU}, {"memory", f.memory, &f.spec.Resources.Memory},
		{"cpu-limit", f.cpuLimit, &f.spec.Resources.CPULimit}, {"memory-limit", f.memoryLimit, &f.spec.Resources.MemoryLimit},
		{"storage-size", f.storageSize, &f.spec.StorageSize},
	} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() <= 0 {
			return usagef("k8s: --%s %q: want a positive Kubernetes quantity, e.g. 500m, 2, 512Mi or 4Gi", q.flag, q.value)
		}
		*q.into = v
	}
	return nil
}

// checkFlags refuses a command line that cannot make working manifests,
// before the scenario is compiled.
func (f *k8sFlags) checkFlags() error {
	if !f.segmentsSet {
		return usagef("k8s: --segments N is required: how many pods share the load")
	}
	if f.spec.Image == "" {
		return usagef("k8s: --image IMAGE is required: the llmload image to run (deploy/Dockerfile builds it)")
	}
	var fe *kube.FieldError
	if err := f.spec.Validate(); errors.As(err, &fe) {
		return usagef("k8s: --%s %v", fe.Field, fe.Err)
	} else if err != nil {
		return err
	}
	return nil
}

func k8sCmd(args []string, stdout, stderr io.Writer) error {
	f, path, err := parseK8sFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := f.checkFlags(); err != nil {
		return err
	}
	if f.spec.Params, err = parseSets(f.sets); err != nil {
		return err
	}
	// The plan is compiled with the environment the pods will have, so
	// that the sizing is theirs and nothing of this shell leaks in.
	script, err := luabind.Compile(path, luabind.Options{Params: f.spec.Params, Seed: f.spec.Seed, Env: podEnv(f.spec)})
	if err != nil {
		return err
	}
	if err := executor.CheckSplit(script.Plan(), f.spec.Segments); err != nil {
		return usagef("k8s: --segments %d: %v", f.spec.Segments, err)
	}
	if err := f.fillSpec(script, path); err != nil {
		return err
	}
	m, err := kube.Build(f.spec)
	var fe *kube.FieldError
	if errors.As(err, &fe) {
		return usagef("k8s: --%s %v", fe.Field, fe.Err)
	} else if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := m.WriteYAML(stdout); err != nil {
		return err
	}
	k8sHowTo(stderr, f.spec, m, script.Plan().Target.BaseURL)
	return nil
}

// fillSpec adds what the compiled scenario tells: its source and data,
// its seed and its load.
func (f *k8sFlags) fillSpec(script *luabind.Script, path string) error {
	s := &f.spec
	s.Script = kube.File{Path: filepath.Base(path), Data: script.Source()}
	for _, name := range script.Files() {
		file := kube.File{Path: name}
		if !filepath.IsAbs(name) { // an absolute one is refused by name in Build
			var err error
			if file.Data, err = os.ReadFile(filepath.Join(filepath.Dir(path), filepath.FromSlash(name))); err != nil {
				return err
			}
		}
		s.Data = append(s.Data, file)
	}
	p := script.Plan()
	s.Seed = p.Seed // --seed, options.seed, or the one Compile picked
	s.Load = kube.LoadOf(p, s.Segments)
	s.Created = time.Now()
	return nil
}

// podEnv is the environment llm.env sees in the pods, bar the API key.
func podEnv(s kube.Spec) func(string) (string, bool) {
	env := map[string]string{}
	if s.Target != "" {
		env["LLMLOAD_BASE_URL"] = s.Target
	}
	if s.Model != "" {
		env["LLMLOAD_MODEL"] = s.Model
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// k8sHowTo tells, on stderr, what the manifests do and how to follow them.
func k8sHowTo(w io.Writer, s kube.Spec, m *kube.Manifests, scriptTarget string) {
	ns := "-n " + m.Merge.Namespace
	fmt.Fprintf(w, "llmload k8s: %s in %d segments, seed %d; the load starts at %s (in %v): apply before then.\n",
		s.Script.Path, s.Segments, m.Seed, m.StartAt.Format(time.RFC3339), time.Until(m.StartAt).Round(time.Second))
	for _, warn := range m.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if s.Target == "" && scriptTarget == "" {
		fmt.Fprintln(w, "  warning: no --target and no options.target.base_url: every pod runs against its own built-in simulator (a dry run of the flow)")
	}
	var b strings.Builder
	if s.Secret != "" {
		fmt.Fprintf(&b, "  kubectl %s create secret generic %s --from-literal=api-key=...  (once)\n", ns, s.Secret)
	}
	fmt.Fprintf(&b, "  kubectl apply -f MANIFESTS.yaml\n")
	fmt.Fprintf(&b, "  kubectl %s get pods -l app.kubernetes.io/instance=%s  (a pod per segment, and the merge)\n", ns, m.Name)
	fmt.Fprintf(&b, "  kubectl %s logs -f job/%s  (the merged summary)\n", ns, m.Merge.Name)
	fmt.Fprintf(&b, "  kubectl %s get pods -l job-name=%s -o jsonpath='{.items[-1].status.containerStatuses[0].state.terminated.exitCode}'  (the gate: 0, 1 or 99)\n", ns, m.Merge.Name)
	fmt.Fprintf(&b, "The merged result is %s in the claim %s. Before applying again: kubectl %s delete job %s %s\n(Jobs are immutable; the claim and its results stay).\n",
		m.MergedPath, m.ClaimName, ns, m.Segments.Name, m.Merge.Name)
	fmt.Fprint(w, b.String())
}
