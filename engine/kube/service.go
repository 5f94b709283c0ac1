package kube

import (
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The segments' /metrics (--listen), as a Prometheus finds it.
const (
	MetricsPortName = "metrics"  // the container's and the Service's port
	MetricsSuffix   = "-metrics" // the Service is NAME-metrics
	MetricsPath     = "/metrics" // where llmload run --listen serves
)

// metricsService is a headless Service selecting the segment pods, so a
// Prometheus with kubernetes_sd's endpoints role (or a ServiceMonitor
// selecting its labels) finds every segment by the port "metrics".
// Headless, since each pod is scraped on its own: a virtual IP would hand
// each scrape to any one segment. The Service carries no
// prometheus.io/scrape annotation: the pods do, and a Prometheus that
// honours both (the common Helm chart's pods and service-endpoints jobs)
// would scrape every segment twice.
func metricsService(s Spec, listen string) *corev1.Service {
	port := listenPort(listen)
	svc := &corev1.Service{TypeMeta: typeMeta("v1", "Service"), ObjectMeta: objectMeta(s, s.Name+MetricsSuffix, "metrics")}
	svc.Spec = corev1.ServiceSpec{
		ClusterIP: corev1.ClusterIPNone,
		Selector:  labels(s, "segment"),
		Ports: []corev1.ServicePort{{Name: MetricsPortName, Port: port, Protocol: corev1.ProtocolTCP,
			TargetPort: intstr.FromString(MetricsPortName)}},
	}
	return svc
}

// scrapeAnnotations are the prometheus.io annotations a Prometheus with
// kubernetes_sd's pod role reads (the common Helm chart's convention).
func scrapeAnnotations(port int32) map[string]string {
	return map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   strconv.Itoa(int(port)),
		"prometheus.io/path":   MetricsPath,
	}
}

// listenPort is a checked --listen address's port.
func listenPort(addr string) int32 {
	_, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return int32(n)
}
