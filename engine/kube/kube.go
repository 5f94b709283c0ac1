// Package kube builds the Kubernetes manifests that run one scenario's
// segments side by side (llmload k8s): a ConfigMap with the scenario and
// its data files, a ReadWriteMany claim for the results, an Indexed Job
// whose pod i runs `llmload run --segment i/N` behind one barrier, a
// headless Service for a Prometheus to find the segments' /metrics (with
// --listen), and a Job that waits for every segment's result and merges
// them, its log the merged summary and its exit code the gate. One
// `kubectl apply -f` starts it all.
//
// The barrier is by default a readiness barrier: each segment says it is
// ready in a directory of the claim, and all start at one instant once
// every one is, so manifests applied late (GitOps, a queued CI job, slow
// image pulls) still start together. A fixed wall-clock barrier
// (Spec.StartIn) is the alternative.
//
// The package is pure: it reads no file, asks no cluster and knows no
// clock but the Spec's, so the manifests are a function of the Spec and
// golden files pin them.
package kube

import (
	"errors"
	"fmt"
	"path"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmload/llmload/engine/plan"
)

// Where the pods see things. The image's entrypoint is llmload itself.
const (
	ScenarioDir = "/scenario" // the ConfigMap: the scenario and its data files
	ResultsDir  = "/results"  // the claim: every segment's result and the merged one
)

// DefaultNamespace is where the objects go unless the Spec names one.
const DefaultNamespace = "default"

// DefaultReadyTimeout is how long the segments wait, from the first
// segment ready, for the last one: time to schedule the pods, pull the
// image, start the VUs and warm up.
const DefaultReadyTimeout = 10 * time.Minute

// MaxReadyTimeout bounds the readiness wait: a segment that holds its
// VUs (and its connections) for longer than a day is a mistake.
const MaxReadyTimeout = 24 * time.Hour

// Spec describes one distributed run.
type Spec struct {
	// Name names the objects: the segment Job is Name, the merge Job
	// Name-merge, the ConfigMap Name-scenario and the claim Name-results.
	// "" derives it from the scenario's file name (DefaultName).
	Name      string
	Namespace string // "" is DefaultNamespace
	Image     string // the llmload image (deploy/Dockerfile)
	Script    File   // Path is the scenario's file name
	// Data are the files the scenario loads, Path relative to the
	// scenario's directory with '/' separators (luabind's Script.Files).
	Data     []File
	Segments int
	// Secret names a Secret whose key "api-key" becomes LLMLOAD_API_KEY;
	// "" sets no key.
	Secret string
	// Target and Model, when set, become LLMLOAD_BASE_URL and
	// LLMLOAD_MODEL, which win over the script's options.target.
	Target, Model string
	// Params are the --set key=value pairs every segment gets.
	Params map[string]string
	// Seed is the run seed, one for all segments: they share one seeded
	// plan (and one arrival sequence), so it must be fixed here.
	Seed int64
	// Created is when the manifests are made; it names the run (RunID).
	Created time.Time
	// StartIn, when set, makes the barrier a fixed wall-clock one at
	// Created + StartIn; 0 is the readiness barrier, which waits at most
	// ReadyTimeout (DefaultReadyTimeout when 0) from the first segment
	// ready for the last.
	StartIn      time.Duration
	ReadyTimeout time.Duration
	// Exports are every segment's --export targets (a receiver the pods
	// push to); Listen, when set, is every segment's --listen address,
	// made to bind all the pod's interfaces, and declared as the port
	// "metrics" of the pods and of a headless Service.
	Exports      []plan.ExportTarget
	Listen       string
	ListenNative bool
	// Load is one segment's share of the plan, for sizing (LoadOf).
	Load Load
	// Resources override the sizing of a segment pod; zero fields are
	// computed from Load and the data.
	Resources Resources
	// Claim names an existing PersistentVolumeClaim for the results;
	// "" makes Name-results, of StorageClass ("" the cluster's default)
	// and StorageSize (zero: ResultsSize).
	Claim        string
	StorageClass string
	StorageSize  resource.Quantity
	// History, when set, is a SQLite DSN (sqlite:FILE) whose file lies in
	// the results' claim: the merge stores the merged run there
	// (`llmload merge --history`), so that runs sharing a claim build one
	// history. HistorySecret names a Secret whose key "history" is the
	// merge's LLMLOAD_HISTORY instead (a PostgreSQL DSN, credentials and
	// all, never in the manifests). Labels label the stored run (the
	// merge's --label); they need one of the two.
	History       string
	HistorySecret string
	Labels        map[string]string
}

// HistorySecretKey is the key of the history DSN in the Secret
// --history-secret names.
const HistorySecretKey = "history"

// SecretRef is a Secret the pods read: its name, the key they read and
// the flag that named it, so that it can be checked before a run.
type SecretRef struct {
	Name, Key, Flag string
}

// File is a file shipped in the ConfigMap.
type File struct {
	Path string
	Data []byte
}

// Resources are a segment container's requests and limits.
type Resources struct {
	CPU, Memory           resource.Quantity // requests
	CPULimit, MemoryLimit resource.Quantity // limits; no CPU limit unless set
}

// Manifests are the objects of one run, in the order they apply.
type Manifests struct {
	ConfigMap *corev1.ConfigMap
	Claim     *corev1.PersistentVolumeClaim // nil when Spec.Claim names one
	Service   *corev1.Service               // the segments' /metrics; nil without Spec.Listen
	Segments  *batchv1.Job
	Merge     *batchv1.Job

	// Name is the run name; RunID prefixes its result files (Name and
	// the time the manifests were made), so a claim that is reused, or
	// outlives its Jobs, never hands an earlier run's files to this
	// run's merge.
	Name, RunID string
	// StartAt is the fixed barrier; zero with the readiness barrier,
	// whose directory in the claim is BarrierDir and whose wait for the
	// last segment is ReadyTimeout.
	StartAt      time.Time
	BarrierDir   string
	ReadyTimeout time.Duration
	// Wait is how long the merge waits for the segments' results (its
	// --wait): the segments' Budget and MergeGrace.
	Wait       time.Duration
	Seed       int64
	ClaimName  string
	MergedPath string   // the merged result, in the claim
	Listen     string   // every segment's --listen address, "" none
	Warnings   []string // things the caller should tell the user
	// Secrets are the Secrets the pods read, each with the key read.
	Secrets []SecretRef
}

// Build validates the Spec and makes the manifests.
func Build(s Spec) (*Manifests, error) {
	s, err := normalize(s)
	if err != nil {
		return nil, err
	}
	cm, items, err := configMap(s)
	if err != nil {
		return nil, err
	}
	res, err := segmentResources(s)
	if err != nil {
		return nil, err
	}
	m := &Manifests{ConfigMap: cm, Name: s.Name, Seed: s.Seed, ClaimName: s.Claim, Wait: Budget(s) + MergeGrace}
	m.RunID = s.Name + "-" + s.Created.UTC().Format("20060102-150405")
	m.MergedPath = path.Join(ResultsDir, m.RunID+"-merged.json")
	if s.StartIn != 0 {
		m.StartAt = startAt(s)
	} else {
		m.BarrierDir, m.ReadyTimeout = path.Join(ResultsDir, m.RunID+"-barrier"), s.ReadyTimeout
	}
	if m.ClaimName == "" {
		m.ClaimName = s.Name + "-results"
		m.Claim = claim(s, m.ClaimName)
	}
	var listenWarning string
	m.Listen, listenWarning = podListen(s.Listen)
	if m.Listen != "" {
		m.Service = metricsService(s, m.Listen)
	}
	m.Segments = segmentJob(s, m, items, res)
	m.Merge = mergeJob(s, m)
	if s.Secret != "" {
		m.Secrets = append(m.Secrets, SecretRef{Name: s.Secret, Key: SecretKey, Flag: "secret"})
	}
	if s.HistorySecret != "" {
		m.Secrets = append(m.Secrets, SecretRef{Name: s.HistorySecret, Key: HistorySecretKey, Flag: "history-secret"})
	}
	m.Warnings = warnings(s)
	if listenWarning != "" {
		m.Warnings = append(m.Warnings, listenWarning)
	}
	return m, nil
}

// normalize fills the Spec's defaults and refuses what cannot work.
func normalize(s Spec) (Spec, error) {
	if s.Name == "" {
		s.Name = DefaultName(s.Script.Path)
	}
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.StartIn == 0 && s.ReadyTimeout == 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if err := s.Validate(); err != nil {
		return s, err
	}
	if s.Seed == 0 {
		return s, &FieldError{"seed", errors.New("must be fixed (not 0), so that every segment draws from one plan")}
	}
	return s, nil
}

// FieldError is a Spec field that cannot work. Field is named as llmload
// k8s's flag that sets it.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks every field a cluster or a pod would refuse later,
// before anything is read or compiled; the error is a *FieldError. An
// empty Name or Namespace passes: Build fills them in.
func (s Spec) Validate() error {
	checks := []struct {
		field string
		err   error
	}{
		{"name", validateIf(s.Name, ValidateName)},
		{"namespace", validateIf(s.Namespace, validateLabel)},
		{"image", ValidateImage(s.Image)},
		{"segments", ValidateSegments(s.Segments)},
		{"secret", validateIf(s.Secret, validateSubdomain)},
		{"target", ValidateTarget(s.Target)},
		{"pvc", validateIf(s.Claim, validateSubdomain)},
		{"storage-class", validateIf(s.StorageClass, validateSubdomain)},
		{"start-in", validateStartIn(s.StartIn)},
		{"ready-timeout", s.validateReadyTimeout()},
		{"pvc", s.claimConflict()},
		{"export", validateExports(s.Exports)},
		{"listen", validateIf(s.Listen, ValidateListen)},
		{"name", s.serviceName()},
		{"history", validateIf(s.History, ValidateHistory)},
		{"history-secret", validateIf(s.HistorySecret, validateSubdomain)},
		{"history-secret", s.historyConflict()},
		{"label", s.labelsNeedHistory()},
	}
	for _, c := range checks {
		if c.err != nil {
			return &FieldError{c.field, c.err}
		}
	}
	return nil
}

// claimConflict refuses sizing a claim that exists already.
func (s Spec) claimConflict() error {
	if s.Claim != "" && (s.StorageClass != "" || !s.StorageSize.IsZero()) {
		return fmt.Errorf("claim %q exists already: a storage class or size applies only to a claim made here", s.Claim)
	}
	return nil
}

// startAt is the barrier, on a whole second (RFC 3339 without fractions
// reads easier in the manifest and in every pod's log).
func startAt(s Spec) time.Time {
	return s.Created.Add(s.StartIn).UTC().Truncate(time.Second).Add(time.Second)
}
