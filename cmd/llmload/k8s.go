package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmload/llmload/engine/executor"
	"github.com/llmload/llmload/engine/history"
	"github.com/llmload/llmload/engine/kube"
	"github.com/llmload/llmload/engine/kube/kuberun"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/luabind"
)

const k8sUsage = `Usage: llmload k8s [flags] SCENARIO.lua --segments N --image IMAGE

Prints Kubernetes manifests that run the scenario as N segments at once, one
pod each ('llmload run --segment i/N'), and a Job that merges their results:
apply them with one 'kubectl apply -f'. The merge Job's log is the merged
summary; its exit code is the gate (0 passed, 1 error, 99 a threshold failed).
With --run, llmload applies them itself, follows the run, prints the merged
summary and exits with the merge's exit code.

The segments start their load together when all N pods are ready (a
readiness barrier in the results' claim), waiting at most --ready-timeout
after the first is: the manifests may be applied any time later. --start-in
makes it a fixed wall-clock start instead.

The scenario and the data files it loads go in a ConfigMap (1 MiB at most);
the results in a ReadWriteMany PersistentVolumeClaim. The API key never
goes in the manifests: put it in a Secret and name it with --secret:
  kubectl create secret generic NAME --from-literal=api-key=...
With --history sqlite:/results/FILE (a file in the claim) or --history-secret
NAME (a Secret whose key history is a PostgreSQL DSN), the merge stores the
merged run in that history.

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
	startInSet            bool
	readyTimeout          time.Duration
	readyTimeoutSet       bool
	export                exportFlags
	run                   bool   // --run: apply and follow instead of printing
	kubeconfig, context   string // with --run
	namespaceSet          bool
	kubeconfigSet         bool
	contextSet            bool
	labels                []string // --label, for the merged run in the history
	historyEnvUnused      bool     // LLMLOAD_HISTORY is set here, and no store is given to the merge
}

func parseK8sFlags(args []string, stderr io.Writer) (*k8sFlags, string, error) {
	var f k8sFlags
	s := &f.spec
	fs := pflag.NewFlagSet("k8s", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, k8sUsage+fs.FlagUsages()) }
	fs.IntVar(&s.Segments, "segments", 0, fmt.Sprintf("how many pods share the load (1 to %d); required", plan.MaxSegments))
	fs.StringVar(&s.Image, "image", "", "the llmload image (built from deploy/Dockerfile), e.g. registry.example.com/llmload:0.1.0; required")
	fs.StringVar(&s.Namespace, "namespace", "", "namespace of every object (default: with --run the kubeconfig context's, else default)")
	fs.StringVar(&s.Secret, "secret", "", "Secret whose key api-key is the API key (LLMLOAD_API_KEY); none: no key")
	fs.StringVar(&s.Name, "name", "", fmt.Sprintf("run name, a DNS-1123 label of at most %d characters (default: from the scenario's file name)", kube.MaxNameLength))
	fs.DurationVar(&f.readyTimeout, "ready-timeout", kube.DefaultReadyTimeout, "how long the segments wait, from the first ready, for the last one (at most 24h)")
	fs.DurationVar(&s.StartIn, "start-in", 0, "a fixed barrier instead: the load starts this long after the manifests are made\n(--start-at of every segment; default: when all the pods are ready)")
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
	fs.StringArrayVar(&f.export.exports, "export", nil, "every segment streams its live metrics: prometheus-rw=URL or otlp=URL, as for run,\n"+
		"the URL as seen from the pods and without credentials; repeatable")
	fs.StringVar(&f.export.listen, "listen", "", "every segment serves /metrics on this port, e.g. :9464, declared for a Prometheus\n"+
		"(pod annotations, port \"metrics\", the headless Service NAME-metrics)")
	fs.StringVar(&s.History, "history", "", "the merge stores the merged run in this history: sqlite:/results/FILE, a file in the results'\n"+
		"claim, so that runs sharing the claim (--pvc) build one history; a PostgreSQL one goes in a Secret")
	fs.StringVar(&s.HistorySecret, "history-secret", "", "Secret whose key history is the merge's --history DSN (LLMLOAD_HISTORY), e.g. postgres://...")
	fs.StringArrayVar(&f.labels, "label", nil, "with --history or --history-secret: label the stored run, key=value (repeatable);\n"+
		"the CI labels (commit, branch, job, ci_run) are read here, where llmload k8s runs, and passed on")
	fs.BoolVar(&f.run, "run", false, "apply the objects to the cluster and follow the run instead of printing them;\n"+
		"stdout gets the merged summary, the exit code is the merge's")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "with --run: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "with --run: the kubeconfig context (default: its current one)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, "", errHelp
		}
		return nil, "", usagef("k8s: %v", err)
	}
	if fs.NArg() != 1 {
		return nil, "", usagef("k8s: expected one SCENARIO.lua, got %s", arguments(fs.NArg()))
	}
	f.segmentsSet, f.startInSet, f.readyTimeoutSet = fs.Changed("segments"), fs.Changed("start-in"), fs.Changed("ready-timeout")
	f.namespaceSet, f.kubeconfigSet, f.contextSet = fs.Changed("namespace"), fs.Changed("kubeconfig"), fs.Changed("context")
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
	if err := f.checkBarrier(); err != nil {
		return err
	}
	if err := f.checkRun(); err != nil {
		return err
	}
	if err := f.parseHistory(os.Getenv); err != nil {
		return err
	}
	f.export.cmd = "k8s"
	if err := f.export.parse(); err != nil {
		return err
	}
	f.spec.Exports, f.spec.Listen, f.spec.ListenNative = f.export.targets, f.export.listen, f.export.native
	var fe *kube.FieldError
	if err := f.spec.Validate(); errors.As(err, &fe) {
		return usagef("k8s: --%s %v", fe.Field, fe.Err)
	} else if err != nil {
		return err
	}
	return nil
}

// parseHistory reads --history's DSN and the labels. The merge pod has
// no CI variables of its own, so the CI labels are read here, from the
// environment llmload k8s runs in, and passed on as --label.
func (f *k8sFlags) parseHistory(getenv func(string) string) error {
	s := &f.spec
	if s.History != "" {
		if _, err := history.ParseDSN(s.History); err != nil {
			return usagef("k8s: --history: %v", err)
		}
	}
	labels, err := history.ParseLabels("--label", f.labels)
	if err != nil {
		return usagef("k8s: %v", err)
	}
	f.historyEnvUnused = getenv("LLMLOAD_HISTORY") != "" && s.History == "" && s.HistorySecret == ""
	switch {
	case s.History != "" || s.HistorySecret != "":
		s.Labels = history.Labels(getenv, labels)
	case len(labels) > 0:
		s.Labels = labels // refused by Validate, by name
	}
	return nil
}

// checkBarrier picks the barrier: the readiness one, unless --start-in
// asks for a fixed one.
func (f *k8sFlags) checkBarrier() error {
	switch {
	case f.startInSet && f.readyTimeoutSet:
		return usagef("k8s: --ready-timeout is the readiness barrier's, and --start-in sets a fixed one: give one of them")
	case f.startInSet:
		if err := kube.ValidateStartIn(f.spec.StartIn); err != nil {
			return usagef("k8s: --start-in %v", err)
		}
		return nil
	}
	if err := kube.ValidateReadyTimeout(f.readyTimeout); err != nil {
		return usagef("k8s: --ready-timeout %v", err)
	}
	f.spec.ReadyTimeout = f.readyTimeout
	return nil
}

// checkRun refuses the cluster's flags without --run, where they would
// have no effect.
func (f *k8sFlags) checkRun() error {
	switch {
	case f.run:
		return nil
	case f.kubeconfigSet:
		return usagef("k8s: --kubeconfig applies only with --run (printed manifests go to kubectl, which reads its own)")
	case f.contextSet:
		return usagef("k8s: --context applies only with --run (printed manifests go to kubectl, which reads its own)")
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
	cluster, err := f.connect()
	if err != nil {
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
	if cluster != nil {
		fmt.Fprintf(stderr, "llmload k8s --run: %s in %d segments, seed %d, on %s, namespace %s; the load starts %s; "+
			"following it for at most %s, then exit 1 naming the segments not finished.\n",
			m.Name, f.spec.Segments, m.Seed, cluster.Server, m.Segments.Namespace, m.Start(), kuberun.Deadline(m).Round(time.Second))
		k8sWarnings(stderr, f, m, script.Plan().Target.BaseURL)
		return k8sRun(cluster, m, stdout, stderr)
	}
	if err := m.WriteYAML(stdout); err != nil {
		return err
	}
	k8sHowTo(stderr, f, m, script.Plan().Target.BaseURL)
	return nil
}

// connect, with --run, reads the kubeconfig before the manifests are
// made: its context names their namespace unless --namespace does.
func (f *k8sFlags) connect() (*kuberun.Cluster, error) {
	if !f.run {
		return nil, nil
	}
	c, err := kuberun.Connect(f.kubeconfig, f.context)
	if err != nil {
		return nil, err
	}
	if !f.namespaceSet {
		f.spec.Namespace = c.Namespace
	}
	return c, nil
}

// k8sRun creates the run's objects and follows it to its end; the exit
// code is the merge's: 0, 99 (a gate failed), else 1. Ctrl-C stops
// following and leaves the run in the cluster.
func k8sRun(c *kuberun.Cluster, m *kube.Manifests, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), interruptSignals...)
	defer stop()
	jobs, err := c.Create(ctx, m, stderr)
	if err == nil {
		var o kuberun.Outcome
		if o, err = c.Follow(ctx, m, jobs, stdout, stderr); err == nil {
			return k8sOutcome(o, m, stderr)
		}
	}
	if ctx.Err() != nil {
		err = errors.New("k8s --run: interrupted; what was created goes on in the cluster")
	}
	var de *kuberun.DeadlineError
	if ctx.Err() != nil || errors.As(err, &de) {
		fmt.Fprintln(stderr, "To follow the run, or delete it:")
		for _, cmd := range kuberun.Commands(m) {
			fmt.Fprintf(stderr, "  %s\n", cmd)
		}
	}
	return err
}

// k8sOutcome turns the merge's exit code into llmload's own.
func k8sOutcome(o kuberun.Outcome, m *kube.Manifests, stderr io.Writer) error {
	fmt.Fprintf(stderr, "llmload k8s --run: exit code %d (%s); the merged result is %s in the claim %s\n",
		o.ExitCode, o.Reason, m.MergedPath, m.ClaimName)
	switch o.ExitCode {
	case exitOK:
		return nil
	case exitThreshold:
		return &gateError{"k8s --run: the merged run failed a threshold"}
	}
	return fmt.Errorf("k8s --run: exit code %d (%s)", o.ExitCode, o.Reason)
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
func k8sHowTo(w io.Writer, f *k8sFlags, m *kube.Manifests, scriptTarget string) {
	s := f.spec
	ns := "-n " + m.Merge.Namespace
	if m.StartAt.IsZero() {
		fmt.Fprintf(w, "llmload k8s: %s in %d segments, seed %d; the load starts %s.\n", s.Script.Path, s.Segments, m.Seed, m.Start())
	} else {
		fmt.Fprintf(w, "llmload k8s: %s in %d segments, seed %d; the load starts at %s (in %v): apply before then.\n",
			s.Script.Path, s.Segments, m.Seed, m.StartAt.Format(time.RFC3339), time.Until(m.StartAt).Round(time.Second))
	}
	k8sWarnings(w, f, m, scriptTarget)
	var b strings.Builder
	if s.Secret != "" {
		fmt.Fprintf(&b, "  kubectl %s create secret generic %s --from-literal=%s=...  (once)\n", ns, s.Secret, kube.SecretKey)
	}
	if s.HistorySecret != "" {
		fmt.Fprintf(&b, "  kubectl %s create secret generic %s --from-literal=%s=postgres://...  (once: the history's DSN)\n", ns, s.HistorySecret, kube.HistorySecretKey)
	}
	fmt.Fprintf(&b, "  kubectl apply -f MANIFESTS.yaml\n")
	fmt.Fprintf(&b, "  kubectl %s get pods -l app.kubernetes.io/instance=%s  (a pod per segment, and the merge)\n", ns, m.Name)
	fmt.Fprintf(&b, "  kubectl %s logs -f job/%s  (the merged summary)\n", ns, m.Merge.Name)
	if m.Service != nil {
		fmt.Fprintf(&b, "  the segments serve /metrics on %s: port \"metrics\" of each pod (annotated prometheus.io/scrape) and of the headless Service %s\n",
			m.Listen, m.Service.Name)
	}
	fmt.Fprintf(&b, "  kubectl %s get pods -l job-name=%s -o jsonpath='{.items[-1].status.containerStatuses[0].state.terminated.exitCode}'  (the gate: 0, 1 or 99)\n", ns, m.Merge.Name)
	fmt.Fprintf(&b, "The merged result is %s in the claim %s. Before applying again: kubectl %s delete job %s %s\n(Jobs are immutable; the claim and its results stay).\n",
		m.MergedPath, m.ClaimName, ns, m.Segments.Name, m.Merge.Name)
	fmt.Fprint(w, b.String())
}

// k8sWarnings tells what the user should know before the run.
func k8sWarnings(w io.Writer, f *k8sFlags, m *kube.Manifests, scriptTarget string) {
	for _, warn := range m.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	if f.spec.Target == "" && scriptTarget == "" {
		fmt.Fprintln(w, "  warning: no --target and no options.target.base_url: every pod runs against its own built-in simulator (a dry run of the flow)")
	}
	if f.historyEnvUnused {
		fmt.Fprintf(w, "  warning: LLMLOAD_HISTORY is set here, but the merge runs in the cluster and does not see it: the merged run is stored "+
			"only with --history sqlite:%s/FILE or --history-secret NAME\n", kube.ResultsDir)
	}
}
