package kube

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/llmload/llmload/engine/golden"
	"github.com/llmload/llmload/engine/plan"
)

var created = time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC)

// baseSpec is a small run: a scenario with one data file in 3 segments.
func baseSpec() Spec {
	return Spec{
		Image:    "registry.example.com/llmload:0.1.0",
		Script:   File{Path: "scenarios/chat_mix.lua", Data: []byte("local llm = require('llmload')\n")},
		Data:     []File{{Path: "data/medium.jsonl", Data: []byte(`{"prompt":"hi"}` + "\n")}},
		Segments: 3, Seed: 42, Created: created,
		Load: Load{VUs: 6, Stages: 4, Length: 4 * time.Minute},
	}
}

func build(t *testing.T, s Spec) *Manifests {
	t.Helper()
	m, err := Build(s)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return m
}

func render(t *testing.T, m *Manifests) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := m.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	full := baseSpec()
	full.Name, full.Namespace = "nightly", "loadtest"
	full.Secret, full.Target, full.Model = "llm-key", "https://vllm.inference.svc:8000/v1", "Qwen/Qwen2.5-7B-Instruct"
	full.Params = map[string]string{"stage_duration": "30s", "prompt": "costs $(HOME) $5"}
	full.Data = append(full.Data, File{Path: "data/more/prompts.csv.gz", Data: fixedGzip(t)})
	full.Claim = "shared-results"
	full.StartIn = 5 * time.Minute
	full.Exports = []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: "http://prometheus.monitoring:9090/api/v1/write", Native: true},
		{Kind: plan.ExportOTLP, URL: "http://otel.monitoring:4318/v1/metrics"}}
	full.Listen, full.ListenNative = ":9464", true
	full.Resources = Resources{CPU: resource.MustParse("2"), CPULimit: resource.MustParse("4"), Memory: resource.MustParse("1Gi")}
	for name, s := range map[string]Spec{"basic.yaml": baseSpec(), "full.yaml": full} {
		t.Run(name, func(t *testing.T) {
			golden.Check(t, name, render(t, build(t, s)))
		})
	}
}

// TestStrictDecode: every document decodes into its k8s.io/api type with
// unknown fields refused, so no field is misspelt or misplaced.
func TestStrictDecode(t *testing.T) {
	s := baseSpec()
	s.Secret, s.Target, s.Listen = "k", "http://10.0.0.1:8000/v1", "127.0.0.1:9464"
	docs := decodeAll(t, render(t, build(t, s)))
	if got, want := kinds(docs), "ConfigMap PersistentVolumeClaim Service Job Job"; got != want {
		t.Fatalf("kinds = %s, want %s", got, want)
	}
	svc := docs[2].obj.(*corev1.Service)
	if svc.Name != "chat-mix-metrics" || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector["app.kubernetes.io/component"] != "segment" {
		t.Errorf("service %s: clusterIP %q, selector %v; want headless, selecting the segments", svc.Name, svc.Spec.ClusterIP, svc.Spec.Selector)
	}
	for _, d := range docs {
		if d.ns != "default" {
			t.Errorf("%s %s: namespace %q, want default", d.kind, d.name, d.ns)
		}
		if d.labels["app.kubernetes.io/name"] != "llmload" || d.labels["app.kubernetes.io/instance"] != "chat-mix" {
			t.Errorf("%s %s: labels %v", d.kind, d.name, d.labels)
		}
	}
}

// doc is one decoded manifest.
type doc struct {
	kind, name, ns string
	labels         map[string]string
	obj            any
}

func decodeAll(t *testing.T, stream []byte) []doc {
	t.Helper()
	var out []doc
	for _, part := range strings.Split(string(stream), "\n---\n")[1:] {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(part), &head); err != nil {
			t.Fatal(err)
		}
		out = append(out, decodeOne(t, head.Kind, []byte(part)))
	}
	return out
}

func decodeOne(t *testing.T, kind string, b []byte) doc {
	t.Helper()
	var d doc
	switch kind {
	case "ConfigMap":
		var o corev1.ConfigMap
		strict(t, b, &o)
		d = doc{o.Kind, o.Name, o.Namespace, o.Labels, &o}
	case "PersistentVolumeClaim":
		var o corev1.PersistentVolumeClaim
		strict(t, b, &o)
		d = doc{o.Kind, o.Name, o.Namespace, o.Labels, &o}
	case "Service":
		var o corev1.Service
		strict(t, b, &o)
		d = doc{o.Kind, o.Name, o.Namespace, o.Labels, &o}
	case "Job":
		var o batchv1.Job
		strict(t, b, &o)
		d = doc{o.Kind, o.Name, o.Namespace, o.Labels, &o}
	default:
		t.Fatalf("unexpected kind %q", kind)
	}
	return d
}

func strict(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, b)
	}
}

func kinds(docs []doc) string {
	var k []string
	for _, d := range docs {
		k = append(k, d.kind)
	}
	return strings.Join(k, " ")
}

// fixedGzip is "prompt\nhi\n" gzipped, as bytes that no compressor
// version can change under the golden file.
func fixedGzip(t *testing.T) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString("H4sIAAAAAAAA/yooys8tKOHKyOQCBAAA//9Nkd9SCgAAAA==")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestSegmentArgs(t *testing.T) {
	const run = "chat-mix-20261201-150405"
	tests := []struct {
		name      string
		change    func(*Spec)
		seg, merg string
		deadline  int64
	}{
		{"readiness barrier", func(*Spec) {},
			"run /scenario/chat_mix.lua --segment $(JOB_COMPLETION_INDEX)/3 --barrier /results/" + run + "-barrier --barrier-timeout 10m0s" +
				" --out /results/" + run + "-segment-$(JOB_COMPLETION_INDEX).json -q --seed 42 --set a=$$(X) --set b=2",
			"merge --wait 21m24s --barrier /results/" + run + "-barrier /results/" + run + "-segment-0.json /results/" + run + "-segment-1.json" +
				" /results/" + run + "-segment-2.json --out /results/" + run + "-merged.json",
			10*60 + 4*60 + 5*60 + 24}, // 10m ready + 4m run + 5m + 24s margin
		{"ready timeout", func(s *Spec) { s.ReadyTimeout = 90 * time.Second },
			"--barrier-timeout 1m30s", "merge --wait 12m54s --barrier", 90 + 4*60 + 5*60 + 24},
		{"fixed barrier", func(s *Spec) { s.StartIn = 2 * time.Minute },
			"run /scenario/chat_mix.lua --segment $(JOB_COMPLETION_INDEX)/3 --start-at 2026-12-01T15:06:06Z" +
				" --out /results/" + run + "-segment-$(JOB_COMPLETION_INDEX).json -q --seed 42 --set a=$$(X) --set b=2",
			"merge --wait 13m24s /results/" + run + "-segment-0.json", 2*60 + 4*60 + 5*60 + 24},
		{"exports", func(s *Spec) {
			s.Exports = []plan.ExportTarget{{Kind: plan.ExportOTLP, URL: "http://otel:4318/v1/metrics?x=$y", Native: true}}
			s.Listen = "0.0.0.0:9464"
		}, "-q --seed 42 --export otlp=http://otel:4318/v1/metrics?x=$$y,native --listen 0.0.0.0:9464 --set a=$$(X)", "merge", 10*60 + 4*60 + 5*60 + 24},
		{"listen on loopback", func(s *Spec) { s.Listen, s.ListenNative = "127.0.0.1:9464", true }, "--listen :9464,native --set", "merge", 10*60 + 4*60 + 5*60 + 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			s.Params = map[string]string{"b": "2", "a": "$(X)"}
			tt.change(&s)
			m := build(t, s)
			if got := strings.Join(m.Segments.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(got, tt.seg) {
				t.Errorf("segment args:\n got %s\nwant %s", got, tt.seg)
			}
			if got := strings.Join(m.Merge.Spec.Template.Spec.Containers[0].Args, " "); !strings.HasPrefix(got, tt.merg) {
				t.Errorf("merge args:\n got %s\nwant %s", got, tt.merg)
			}
			if got := *m.Segments.Spec.ActiveDeadlineSeconds; got != tt.deadline {
				t.Errorf("activeDeadlineSeconds = %d, want %d", got, tt.deadline)
			}
		})
	}
}

// TestReadinessBarrier: the default barrier names no instant, so
// manifests applied late still start together, and every printing is a
// run of its own.
func TestReadinessBarrier(t *testing.T) {
	m := build(t, baseSpec())
	if !m.StartAt.IsZero() || m.BarrierDir != "/results/chat-mix-20261201-150405-barrier" || m.ReadyTimeout != DefaultReadyTimeout {
		t.Errorf("StartAt %v, BarrierDir %q, ReadyTimeout %v", m.StartAt, m.BarrierDir, m.ReadyTimeout)
	}
	if got := strings.Join(m.Segments.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(got, "--start-at") {
		t.Errorf("segment args name a fixed barrier: %s", got)
	}
	head := strings.SplitN(string(render(t, m)), "\n", 3)
	if want := "the load starts when all 3 pods are ready, at most 10m0s after the first is."; !strings.HasSuffix(head[0], want) || strings.Contains(head[1], "before") {
		t.Errorf("head:\n%s\n%s\nwant %q and no deadline to apply by", head[0], head[1], want)
	}
	later := baseSpec()
	later.Created = later.Created.Add(time.Second)
	if a, b := m.RunID, build(t, later).RunID; a == b {
		t.Errorf("two printings a second apart share the run id %s", a)
	}
}

// TestListen: --listen declares the port to the pods and a Prometheus.
func TestListen(t *testing.T) {
	s := baseSpec()
	s.Listen = "127.0.0.1:9464"
	m := build(t, s)
	tmpl := m.Segments.Spec.Template
	ports := tmpl.Spec.Containers[0].Ports
	if len(ports) != 1 || ports[0].Name != "metrics" || ports[0].ContainerPort != 9464 {
		t.Errorf("container ports %+v, want metrics 9464", ports)
	}
	want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9464", "prometheus.io/path": "/metrics"}
	if fmt.Sprint(tmpl.Annotations) != fmt.Sprint(want) {
		t.Errorf("pod annotations %v, want %v", tmpl.Annotations, want)
	}
	sp := m.Service.Spec.Ports
	if len(sp) != 1 || sp[0].Name != "metrics" || sp[0].Port != 9464 || sp[0].TargetPort.String() != "metrics" {
		t.Errorf("service ports %+v", sp)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "listen on :9464 (every interface of the pod)") {
		t.Errorf("warnings %q, want one saying 127.0.0.1 became :9464", m.Warnings)
	}
	if m.Merge.Spec.Template.Annotations != nil || len(m.Merge.Spec.Template.Spec.Containers[0].Ports) > 0 {
		t.Errorf("the merge pod is declared scrapeable")
	}
	if none := build(t, baseSpec()); none.Service != nil || none.Segments.Spec.Template.Annotations != nil {
		t.Errorf("without --listen: service %v, annotations %v", none.Service, none.Segments.Spec.Template.Annotations)
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		name                  string
		secret, target, model string
		want                  string
	}{
		{"none", "", "", "", "JOB_COMPLETION_INDEX"},
		{"secret", "llm-key", "", "", "JOB_COMPLETION_INDEX LLMLOAD_API_KEY=secret:llm-key/api-key"},
		{"target and model", "", "http://h:8000/v1", "m$x", "JOB_COMPLETION_INDEX LLMLOAD_BASE_URL=http://h:8000/v1 LLMLOAD_MODEL=m$$x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			s.Secret, s.Target, s.Model = tt.secret, tt.target, tt.model
			env := build(t, s).Segments.Spec.Template.Spec.Containers[0].Env
			var parts []string
			for _, e := range env {
				switch {
				case e.Value != "":
					parts = append(parts, e.Name+"="+e.Value)
				case e.ValueFrom.SecretKeyRef != nil:
					parts = append(parts, e.Name+"=secret:"+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
				default:
					parts = append(parts, e.Name)
				}
			}
			if got := strings.Join(parts, " "); got != tt.want {
				t.Errorf("env = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestConfigMapItems(t *testing.T) {
	s := baseSpec()
	s.Data = []File{{Path: "data/a.txt", Data: []byte("x\n")}, {Path: "data_a.txt", Data: []byte("y\n")},
		{Path: "p.gz", Data: gzipped(t, "z\n")}}
	m := build(t, s)
	var items []string
	for _, it := range m.Segments.Spec.Template.Spec.Volumes[0].ConfigMap.Items {
		items = append(items, it.Key+"→"+it.Path)
	}
	if got, want := strings.Join(items, " "), "chat_mix.lua→chat_mix.lua data_a.txt→data/a.txt data_a.txt-2→data_a.txt p.gz→p.gz"; got != want {
		t.Errorf("items = %s, want %s", got, want)
	}
	if _, ok := m.ConfigMap.BinaryData["p.gz"]; !ok || m.ConfigMap.Data["data_a.txt"] != "x\n" {
		t.Errorf("gzip not in binaryData or text not in data: %v %v", m.ConfigMap.Data, m.ConfigMap.BinaryData)
	}
}

func TestClaim(t *testing.T) {
	tests := []struct {
		name         string
		claim, class string
		size         string
		segments     int
		want         string // claim name, class, size; "-" no claim object
	}{
		{"default", "", "", "", 3, "chat-mix-results  1Gi"},
		{"class", "", "nfs", "", 3, "chat-mix-results nfs 1Gi"},
		{"size", "", "", "5Gi", 3, "chat-mix-results  5Gi"},
		{"many segments", "", "", "", 200, "chat-mix-results  4Gi"},
		{"existing", "mine", "", "", 3, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			s.Claim, s.StorageClass, s.Segments = tt.claim, tt.class, tt.segments
			if tt.size != "" {
				s.StorageSize = resource.MustParse(tt.size)
			}
			m := build(t, s)
			got := "-"
			if m.Claim != nil {
				size := m.Claim.Spec.Resources.Requests[corev1.ResourceStorage]
				got = fmt.Sprintf("%s %s %s", m.Claim.Name, deref(m.Claim.Spec.StorageClassName), size.String())
				if m.Claim.Spec.AccessModes[0] != corev1.ReadWriteMany {
					t.Errorf("access modes %v", m.Claim.Spec.AccessModes)
				}
			}
			if got != tt.want {
				t.Errorf("claim = %q, want %q", got, tt.want)
			}
			for _, job := range []*batchv1.Job{m.Segments, m.Merge} {
				vols := job.Spec.Template.Spec.Volumes
				if c := vols[len(vols)-1].PersistentVolumeClaim.ClaimName; c != m.ClaimName {
					t.Errorf("%s mounts claim %s, want %s", job.Name, c, m.ClaimName)
				}
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestResources(t *testing.T) {
	tests := []struct {
		name string
		load Load
		data int // bytes of a gzipped data file, decompressed
		over Resources
		want string // cpu req, mem req, cpu limit, mem limit
	}{
		{"small", Load{VUs: 6}, 0, Resources{}, "260m 65Mi - 130Mi"},
		{"1000 VUs", Load{VUs: 1000}, 0, Resources{}, "1250m 221Mi - 442Mi"},
		{"open model", Load{VUs: 100, Rate: 1000}, 0, Resources{}, "550m 80Mi - 160Mi"},
		{"data", Load{VUs: 0}, 10 << 20, Resources{}, "250m 74Mi - 148Mi"},
		{"overrides", Load{VUs: 6}, 0, Resources{CPU: resource.MustParse("2"), CPULimit: resource.MustParse("3"),
			Memory: resource.MustParse("1Gi"), MemoryLimit: resource.MustParse("3Gi")}, "2 1Gi 3 3Gi"},
		{"memory only", Load{VUs: 6}, 0, Resources{Memory: resource.MustParse("1Gi")}, "260m 1Gi - 2Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			s.Load, s.Resources = tt.load, tt.over
			s.Data = []File{{Path: "d.txt.gz", Data: gzipped(t, strings.Repeat("x", tt.data))}}
			r := build(t, s).Segments.Spec.Template.Spec.Containers[0].Resources
			cpuLimit := "-"
			if q, ok := r.Limits[corev1.ResourceCPU]; ok {
				cpuLimit = q.String()
			}
			got := fmt.Sprintf("%s %s %s %s", r.Requests.Cpu(), r.Requests.Memory(), cpuLimit, r.Limits.Memory())
			if got != tt.want {
				t.Errorf("resources = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecompressedSize(t *testing.T) {
	z := gzipped(t, strings.Repeat("prompt\n", 1000))
	if got := decompressedSize(z); got != 7000 {
		t.Errorf("gzip: %d, want 7000", got)
	}
	if got := decompressedSize([]byte("plain")); got != 5 {
		t.Errorf("plain: %d, want 5", got)
	}
}

func TestLoadOf(t *testing.T) {
	p := plan.Plan{Warmup: plan.Warmup{Duration: 10 * time.Second}, Scenarios: []plan.Scenario{
		{Executor: plan.ExecutorRampingVUs, Stages: []plan.Stage{{Target: 4, Duration: time.Minute}, {Target: 10, Duration: time.Minute}},
			GracefulStop: 30 * time.Second},
		{Executor: plan.ExecutorConstantArrivalRate, PreAllocatedVUs: 5, MaxVUsCap: 20, TimeUnit: time.Second, StartTime: time.Minute,
			Stages: []plan.Stage{{Rate: 40, Duration: 2 * time.Minute}}, GracefulStop: 10 * time.Second},
	}}
	tests := []struct {
		n    int
		want Load
	}{
		{1, Load{VUs: 30, Rate: 40, Stages: 3, Length: 10*time.Second + 3*time.Minute + 10*time.Second}},
		{3, Load{VUs: 4 + 7, Rate: 40.0 / 3, Stages: 3, Length: 10*time.Second + 3*time.Minute + 10*time.Second}},
	}
	for _, tt := range tests {
		if got := LoadOf(p, tt.n); got != tt.want {
			t.Errorf("LoadOf(%d) = %+v, want %+v", tt.n, got, tt.want)
		}
	}
}

func TestDefaultName(t *testing.T) {
	tests := map[string]string{
		"scenarios/chat_mix.lua":         "chat-mix",
		"Open Loop.lua":                  "open-loop",
		"../x/__weird__--name__.lua":     "weird-name",
		"日本.lua":                         "llmload",
		strings.Repeat("a", 80) + ".lua": strings.Repeat("a", MaxNameLength),
	}
	for in, want := range tests {
		if got := DefaultName(in); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", in, got, want)
		}
		if err := ValidateName(DefaultName(in)); err != nil {
			t.Errorf("DefaultName(%q) is not valid: %v", in, err)
		}
	}
}

func TestValidateImage(t *testing.T) {
	tests := []struct {
		ref    string
		ok     bool
		pinned bool
	}{
		{"llmload", true, false},
		{"llmload:latest", true, false},
		{"llmload:0.1.0", true, true},
		{"registry.example.com:5000/team/llmload:v1", true, true},
		{"localhost:5000/llmload", true, false},
		{"ghcr.io/org/llmload@sha256:" + strings.Repeat("ab", 32), true, true},
		{"", false, false},
		{"LLMLoad:1", false, false},
		{"llmload:", false, false},
		{"http://registry/llmload:1", false, false},
		{"llm load", false, false},
	}
	for _, tt := range tests {
		err := ValidateImage(tt.ref)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateImage(%q) = %v, want ok %v", tt.ref, err, tt.ok)
		}
		if tt.ok && pinned(tt.ref) != tt.pinned {
			t.Errorf("pinned(%q) = %v, want %v", tt.ref, !tt.pinned, tt.pinned)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 700<<10)
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"bad name", func(s *Spec) { s.Name = "Chat_Mix" }, `name: "Chat_Mix": want a DNS-1123 label`},
		{"long name", func(s *Spec) { s.Name = strings.Repeat("a", 58) }, "at most 57, so that"},
		{"bad namespace", func(s *Spec) { s.Namespace = "Load Test" }, `namespace: "Load Test"`},
		{"no image", func(s *Spec) { s.Image = "" }, "image: required"},
		{"bad image", func(s *Spec) { s.Image = "Foo/Bar" }, `image: "Foo/Bar" is not an image reference`},
		{"no segments", func(s *Spec) { s.Segments = 0 }, "segments: 0: want 1 to 10000"},
		{"too many segments", func(s *Spec) { s.Segments = plan.MaxSegments + 1 }, "segments: 10001"},
		{"bad secret", func(s *Spec) { s.Secret = "My_Key" }, `secret: "My_Key"`},
		{"target not http", func(s *Spec) { s.Target = "ftp://x" }, `target: "ftp://x" is not an http(s) URL`},
		{"target with password", func(s *Spec) { s.Target = "https://u:hunter2@h/v1" }, "carries credentials"},
		{"target with key", func(s *Spec) { s.Target = "https://h/v1?api_key=hunter2" }, "put the API key in a Secret"},
		{"claim and class", func(s *Spec) { s.Claim, s.StorageClass = "c", "nfs" }, `pvc: claim "c" exists already`},
		{"claim and size", func(s *Spec) { s.Claim, s.StorageSize = "c", resource.MustParse("1Gi") }, `claim "c" exists already`},
		{"seed 0", func(s *Spec) { s.Seed = 0 }, "seed: must be fixed"},
		{"negative start", func(s *Spec) { s.StartIn = -time.Second }, "start-in: -1s"},
		{"negative ready timeout", func(s *Spec) { s.ReadyTimeout = -time.Second }, "ready-timeout: -1s: want a wait above 0"},
		{"ready timeout over a day", func(s *Spec) { s.ReadyTimeout = 25 * time.Hour }, "ready-timeout: 25h0m0s: want a wait above 0 and at most 24h0m0s"},
		{"ready timeout and start-in", func(s *Spec) { s.ReadyTimeout, s.StartIn = time.Minute, time.Minute }, "ready-timeout: applies to the readiness barrier"},
		{"export kind", func(s *Spec) { s.Exports = []plan.ExportTarget{{Kind: "statsd", URL: "http://h"}} }, `export: statsd=...: unknown kind "statsd"`},
		{"export twice", func(s *Spec) {
			s.Exports = []plan.ExportTarget{{Kind: plan.ExportOTLP, URL: "http://a"}, {Kind: plan.ExportOTLP, URL: "http://b"}}
		}, "export: otlp given twice"},
		{"export not http", func(s *Spec) { s.Exports = []plan.ExportTarget{{Kind: plan.ExportOTLP, URL: "grpc://h:4317"}} }, "not an http(s) URL"},
		{"export with password", func(s *Spec) {
			s.Exports = []plan.ExportTarget{{Kind: plan.ExportPrometheusRW, URL: "https://u:hunter2@prom/api/v1/write"}}
		}, `export: prometheus-rw="https://prom/api/v1/write" carries credentials, which would be stored in plain text`},
		{"export with token", func(s *Spec) {
			s.Exports = []plan.ExportTarget{{Kind: plan.ExportOTLP, URL: "https://otel/v1/metrics?token=hunter2"}}
		}, "give the receiver's credentials as a header instead"},
		{"listen no port", func(s *Spec) { s.Listen = "9464" }, `listen: "9464": want :PORT`},
		{"listen port 0", func(s *Spec) { s.Listen = ":0" }, `listen: ":0": the port must be a number from 1 to 65535`},
		{"listen port too big", func(s *Spec) { s.Listen = ":70000" }, "from 1 to 65535"},
		{"listen and a name of digits", func(s *Spec) { s.Name, s.Listen = "2026-run", ":9464" }, "name: \"2026-run\": with --listen the Service 2026-run-metrics must be a DNS-1035 label"},
		{"listen and a long name", func(s *Spec) { s.Name, s.Listen = strings.Repeat("a", 56), ":9464" }, "at most 63 characters"},
		{"bad claim", func(s *Spec) { s.Claim = "Results!" }, `pvc: "Results!"`},
		{"bad class", func(s *Spec) { s.StorageClass = "a b" }, `storage-class: "a b"`},
		{"outside", func(s *Spec) { s.Data = []File{{Path: "/home/me/big.jsonl"}} }, "data file /home/me/big.jsonl is outside the scenario's directory"},
		{"climbs out", func(s *Spec) { s.Data = []File{{Path: "../shared/p.txt"}} }, "data file ../shared/p.txt is outside"},
		{"twice", func(s *Spec) { s.Data = []File{{Path: "chat_mix.lua"}} }, "listed twice, or is the scenario itself"},
		{"too big", func(s *Spec) {
			s.Data = []File{{Path: "a.txt", Data: big}, {Path: "data/b.txt", Data: big}, {Path: "c.txt", Data: []byte("c")}}
		}, "come to 1.4 MiB, over the 1.0 MiB one ConfigMap may hold; the biggest: a.txt (700.0 KiB), data/b.txt (700.0 KiB), chat_mix.lua"},
		{"memory limit below request", func(s *Spec) {
			s.Resources = Resources{Memory: resource.MustParse("2Gi"), MemoryLimit: resource.MustParse("1Gi")}
		}, "memory-limit: 1Gi is below the memory request 2Gi"},
		{"history in postgres", func(s *Spec) { s.History = "postgres://u:hunter2@db:5432/llmload" },
			`history: "postgres://db:5432/llmload": a PostgreSQL DSN would stand in the manifests in plain text, password and all: put it in a Secret`},
		{"history outside the claim", func(s *Spec) { s.History = "sqlite:history.db" }, "history: \"sqlite:history.db\": the merge pod keeps only what it writes to the results' claim, mounted at /results"},
		{"history climbing out of the claim", func(s *Spec) { s.History = "sqlite:/results/../etc/h.db" }, "e.g. sqlite:/results/history.db"},
		{"history the claim itself", func(s *Spec) { s.History = "sqlite:/results/" }, "name a file there"},
		{"history of no known kind", func(s *Spec) { s.History = "mysql://db/x" }, `history: "mysql://db/x": want sqlite:/results/FILE`},
		{"two histories", func(s *Spec) { s.History, s.HistorySecret = "sqlite:/results/h.db", "hist" }, "history-secret: and --history both name a store"},
		{"bad history secret", func(s *Spec) { s.HistorySecret = "Hist_DSN" }, `history-secret: "Hist_DSN"`},
		{"labels without a history", func(s *Spec) { s.Labels = map[string]string{"team": "search"} }, "label: has no effect without --history"},
		{"label with a line break", func(s *Spec) {
			s.History, s.Labels = "sqlite:/results/h.db", map[string]string{"team": "a\nb"}
		}, "the value on one line"},
		{"cpu limit below request", func(s *Spec) {
			s.Resources = Resources{CPU: resource.MustParse("2"), CPULimit: resource.MustParse("1")}
		}, "cpu-limit: 1 is below the CPU request 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			tt.change(&s)
			_, err := Build(s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Build: %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error repeats a credential: %v", err)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Spec)
		want   string // "" none
	}{
		{"none", func(*Spec) {}, ""},
		{"unpinned", func(s *Spec) { s.Image = "llmload" }, "image llmload names no version"},
		{"target without secret", func(s *Spec) { s.Target = "http://h/v1" }, "no --secret"},
		{"short lead", func(s *Spec) { s.StartIn = 10 * time.Second }, "start late"},
		{"privileged port", func(s *Spec) { s.Listen = ":80" }, "--listen port 80: the pods run as a non-root user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			tt.change(&s)
			got := strings.Join(build(t, s).Warnings, "\n")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("warnings = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPodPolicy pins the choices the package comment defends.
func TestPodPolicy(t *testing.T) {
	m := build(t, baseSpec())
	seg := m.Segments.Spec
	if *seg.CompletionMode != batchv1.IndexedCompletion || *seg.Completions != 3 || *seg.Parallelism != 3 {
		t.Errorf("segments: mode %v, completions %d, parallelism %d", *seg.CompletionMode, *seg.Completions, *seg.Parallelism)
	}
	if seg.BackoffLimit != nil || *seg.BackoffLimitPerIndex != 0 {
		t.Errorf("segments: backoffLimit %v, backoffLimitPerIndex %d; want unset and 0", seg.BackoffLimit, *seg.BackoffLimitPerIndex)
	}
	for _, job := range []*batchv1.Job{m.Segments, m.Merge} {
		pod := job.Spec.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever || *pod.SecurityContext.RunAsUser != ImageUser || !*pod.SecurityContext.RunAsNonRoot {
			t.Errorf("%s: restart %s, user %d", job.Name, pod.RestartPolicy, *pod.SecurityContext.RunAsUser)
		}
		if c := pod.Containers[0]; c.Command != nil || c.Image != baseSpec().Image {
			t.Errorf("%s: command %v (the image's entrypoint is llmload), image %s", job.Name, c.Command, c.Image)
		}
	}
	if got := m.Merge.Spec.PodFailurePolicy.Rules[0].OnExitCodes.Values; fmt.Sprint(got) != "[1 2 99]" {
		t.Errorf("merge fails the Job on exit codes %v", got)
	}
}

// TestHistory: the merge, and only the merge, stores the run: a SQLite
// file in the claim as an argument, a Secret's DSN as LLMLOAD_HISTORY,
// the labels in order; the Secrets the pods read are listed for the
// check before a run.
func TestHistory(t *testing.T) {
	tests := []struct {
		name          string
		history, sec  string
		labels        map[string]string
		wantArgs      string
		wantEnv       string
		wantSecretRef []SecretRef
	}{
		{"none", "", "", nil, "--out /results/chat-mix-20261201-150405-merged.json", "", []SecretRef{{"llm-key", "api-key", "secret"}}},
		{"sqlite in the claim", "sqlite:/results/history.db?timeout=5s", "", map[string]string{"team": "search", "branch": "main", "cost": "$5"},
			"--out /results/chat-mix-20261201-150405-merged.json --history sqlite:/results/history.db?timeout=5s --label branch=main --label cost=$$5 --label team=search",
			"", []SecretRef{{"llm-key", "api-key", "secret"}}},
		{"a Secret's DSN", "", "hist", map[string]string{"team": "search"},
			"--out /results/chat-mix-20261201-150405-merged.json --label team=search", "LLMLOAD_HISTORY=secret:hist/history",
			[]SecretRef{{"llm-key", "api-key", "secret"}, {"hist", "history", "history-secret"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseSpec()
			s.Secret, s.History, s.HistorySecret, s.Labels = "llm-key", tt.history, tt.sec, tt.labels
			m := build(t, s)
			merge := m.Merge.Spec.Template.Spec.Containers[0]
			args := strings.Join(merge.Args, " ")
			if !strings.HasSuffix(args, tt.wantArgs) {
				t.Errorf("merge args %q, want them to end %q", args, tt.wantArgs)
			}
			var env []string
			for _, e := range merge.Env {
				env = append(env, e.Name+"=secret:"+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
			}
			if got := strings.Join(env, " "); got != tt.wantEnv {
				t.Errorf("merge env %q, want %q", got, tt.wantEnv)
			}
			seg := m.Segments.Spec.Template.Spec.Containers[0]
			if segArgs := strings.Join(seg.Args, " "); strings.Contains(segArgs, "--history") || strings.Contains(segArgs, "--label") {
				t.Errorf("segment args %q store runs too: only the merged run belongs in the history", segArgs)
			}
			for _, e := range seg.Env {
				if e.Name == "LLMLOAD_HISTORY" {
					t.Errorf("a segment pod gets LLMLOAD_HISTORY")
				}
			}
			if !reflect.DeepEqual(m.Secrets, tt.wantSecretRef) {
				t.Errorf("Secrets = %+v, want %+v", m.Secrets, tt.wantSecretRef)
			}
		})
	}
}
