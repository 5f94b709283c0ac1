// Package kuberun runs the manifests of engine/kube on a cluster and
// follows the run to its end, as a user would with kubectl: it creates
// the objects, reports the segment pods' progress, streams the merge
// pod's log (the merged summary) and reads the merge's exit code, which
// is the run's.
//
// The decisions — a pod's state, the segments' progress, the merge's
// outcome and exit code, whether an object that exists may be reused —
// are pure functions over k8s.io/api objects (status.go); the rest talks
// to the API server through client-go.
package kuberun

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/llmload/llmload/engine/kube"
)

// Cluster is a connection to the API server of one kubeconfig context.
// Safe for concurrent use, as client-go's clients are.
type Cluster struct {
	// core and batch make the API calls, each bounded by RequestTimeout;
	// logs streams logs, unbounded, since a followed log lasts as long
	// as its container.
	core, batch, logs rest.Interface
	// Namespace is the context's namespace, kube.DefaultNamespace when it
	// names none: where the objects go unless --namespace says.
	Namespace string
	// Server is the API server's URL, for messages.
	Server string
}

// Connect reads the kubeconfig by kubectl's rules — kubeconfig when set,
// else $KUBECONFIG's files, else ~/.kube/config; in a pod, its service
// account — and connects to context ("" the current one). Errors name
// the flag or file at fault.
func Connect(kubeconfig, context string) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, errors.Unwrap(err))
		}
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	if err := checkContext(cc, kubeconfig, context); err != nil {
		return nil, err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, configError(err, kubeconfig, context)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, configError(err, kubeconfig, context)
	}
	if ns == "" {
		ns = kube.DefaultNamespace
	}
	c := &Cluster{Namespace: ns, Server: cfg.Host}
	for _, r := range []struct {
		into    *rest.Interface
		gv      schema.GroupVersion
		path    string
		timeout time.Duration
	}{
		{&c.core, corev1.SchemeGroupVersion, "/api", RequestTimeout},
		{&c.batch, batchv1.SchemeGroupVersion, "/apis", RequestTimeout},
		{&c.logs, corev1.SchemeGroupVersion, "/api", 0},
	} {
		if *r.into, err = restFor(cfg, r.gv, r.path, r.timeout); err != nil {
			return nil, fmt.Errorf("%s: %w", where(kubeconfig), err)
		}
	}
	return c, nil
}

// RequestTimeout bounds one API call, so that an API server that
// accepts connections and never answers cannot hang the run.
const RequestTimeout = 30 * time.Second

// checkContext refuses a --context the kubeconfig lacks, naming those it
// has (client-go's own error names neither flag nor file).
func checkContext(cc clientcmd.ClientConfig, kubeconfig, context string) error {
	if context == "" {
		return nil
	}
	raw, err := cc.RawConfig()
	if err != nil {
		return configError(err, kubeconfig, context)
	}
	if _, ok := raw.Contexts[context]; ok {
		return nil
	}
	names := []string{"none"}
	if len(raw.Contexts) > 0 {
		names = slices.Sorted(maps.Keys(raw.Contexts))
	}
	return fmt.Errorf("--context %s: no such context in %s (it has: %s)", context, where(kubeconfig), strings.Join(names, ", "))
}

func where(kubeconfig string) string {
	if kubeconfig != "" {
		return "--kubeconfig " + kubeconfig
	}
	return "the kubeconfig ($KUBECONFIG, else ~/.kube/config)"
}

// configError says which kubeconfig could not be used, and how to give
// one.
func configError(err error, kubeconfig, context string) error {
	if clientcmd.IsEmptyConfig(err) {
		return fmt.Errorf("no cluster to run on: %s names none; give one with --kubeconfig or KUBECONFIG, as for kubectl", where(kubeconfig))
	}
	return fmt.Errorf("%s: %w", where(kubeconfig), err)
}
