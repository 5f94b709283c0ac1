package kuberun

import (
	"context"
	"io"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// codecs encode and decode the only API groups a run touches, core/v1
// and batch/v1. client-go's typed clients would register every group of
// Kubernetes and link their apply configurations, which more than
// doubles what llmload k8s adds to the binary.
var codecs = newCodecs()

func newCodecs() serializer.CodecFactory {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // only a type registered twice fails, which these two never do
		}
	}
	return serializer.NewCodecFactory(s)
}

// restFor is a REST client of one API group version; timeout 0 is none.
func restFor(cfg *rest.Config, gv schema.GroupVersion, apiPath string, timeout time.Duration) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion, c.APIPath = &gv, apiPath
	c.NegotiatedSerializer = codecs.WithoutConversion()
	c.Timeout = timeout
	if c.UserAgent == "" {
		c.UserAgent = "llmload k8s --run"
	}
	return rest.RESTClientFor(c)
}

// resource is one kind of namespaced object, by its plural name.
type resource struct {
	client rest.Interface
	name   string
}

func (r resource) get(ctx context.Context, ns, name string, into runtime.Object) error {
	return r.client.Get().Namespace(ns).Resource(r.name).Name(name).Do(ctx).Into(into)
}

func (r resource) create(ctx context.Context, ns string, obj, into runtime.Object) error {
	return r.client.Post().Namespace(ns).Resource(r.name).Body(obj).Do(ctx).Into(into)
}

func (r resource) update(ctx context.Context, ns, name string, obj, into runtime.Object) error {
	return r.client.Put().Namespace(ns).Resource(r.name).Name(name).Body(obj).Do(ctx).Into(into)
}

func (r resource) list(ctx context.Context, ns, selector string, into runtime.Object) error {
	return r.client.Get().Namespace(ns).Resource(r.name).Param("labelSelector", selector).Do(ctx).Into(into)
}

// The resources a run touches.
func (c *Cluster) secrets() resource    { return resource{c.core, "secrets"} }
func (c *Cluster) configMaps() resource { return resource{c.core, "configmaps"} }
func (c *Cluster) claims() resource     { return resource{c.core, "persistentvolumeclaims"} }
func (c *Cluster) services() resource   { return resource{c.core, "services"} }
func (c *Cluster) pods() resource       { return resource{c.core, "pods"} }
func (c *Cluster) jobs() resource       { return resource{c.batch, "jobs"} }

// followLog streams a container's log as it is written, until the
// container ends or ctx does.
func (c *Cluster) followLog(ctx context.Context, ns, pod, container string) (io.ReadCloser, error) {
	return c.logs.Get().Namespace(ns).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("follow", "true").Stream(ctx)
}
