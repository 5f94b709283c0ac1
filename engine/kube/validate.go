package kube

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
)

// MaxNameLength bounds a run name so that the longest name made from it,
// the merge Job's NAME-merge, stays within the 63 characters a Job name
// may have (it becomes a label value, and its pods' host names).
const MaxNameLength = validation.DNS1123LabelMaxLength - len("-merge")

// ValidateName checks a run name: a DNS-1123 label of at most
// MaxNameLength characters.
func ValidateName(name string) error {
	if len(name) > MaxNameLength {
		return fmt.Errorf("%q is %d characters; at most %d, so that %s-merge fits Kubernetes' 63", name, len(name), MaxNameLength, name)
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Errorf("%q: want a DNS-1123 label, lowercase letters, digits and '-', starting and ending with a letter or digit, e.g. chat-mix", name)
	}
	return nil
}

// DefaultName derives a run name from the scenario's file name:
// "scenarios/Chat_Mix.lua" is "chat-mix". A name with nothing usable left
// is "llmload".
func DefaultName(script string) string {
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(script, `\`, "/")), ".lua")
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(base) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > MaxNameLength {
		name = strings.TrimRight(name[:MaxNameLength], "-")
	}
	if name == "" {
		return "llmload"
	}
	return name
}

// ValidateSegments checks a segment count: 1 to engine.MaxSegments.
func ValidateSegments(n int) error {
	if n < 1 || n > plan.MaxSegments {
		return fmt.Errorf("%d: want 1 to %d segments, one pod each", n, plan.MaxSegments)
	}
	return nil
}

// Image references, after the distribution project's grammar
// (github.com/distribution/reference): [host[:port]/]path[:tag][@digest],
// the path lowercase.
var (
	imageDomain = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?`
	imagePath   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	imageRef    = regexp.MustCompile(`^(?:` + imageDomain + `/)?` + imagePath + `(?:/` + imagePath + `)*` +
		`(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)
)

// ValidateImage checks an image reference such as
// registry.example.com/llmload:0.1.0 or ghcr.io/org/llmload@sha256:...
func ValidateImage(ref string) error {
	switch {
	case ref == "":
		return errors.New("required: the llmload image to run, built from deploy/Dockerfile")
	case len(ref) > 255+128+80:
		return fmt.Errorf("%q is too long for an image reference", ref)
	case !imageRef.MatchString(ref):
		return fmt.Errorf("%q is not an image reference: want [registry/]repository[:tag][@sha256:digest], the repository lowercase", ref)
	}
	return nil
}

// pinned reports whether an image reference names one build: a digest,
// or a tag other than latest.
func pinned(ref string) bool {
	if strings.Contains(ref, "@") {
		return true
	}
	last := ref[strings.LastIndexByte(ref, '/')+1:]
	_, tag, ok := strings.Cut(last, ":")
	return ok && tag != "latest"
}

// ValidateTarget checks a target base URL for the manifests: http(s),
// and no credentials, since the manifests are plain text that gets
// committed, pasted and read by anyone who may list Jobs.
func ValidateTarget(raw string) error {
	if raw == "" {
		return nil
	}
	if err := checkHTTPURL(raw); err != nil {
		return err
	}
	if hasCredentials(raw) {
		return fmt.Errorf("%q carries credentials, which would be written into the manifests in plain text: put the API key in a Secret (key api-key) and name it with --secret", redact.URL(raw))
	}
	return nil
}

// ValidateExportURL checks an --export receiver's URL for the manifests:
// http(s), and no credentials, for the reason ValidateTarget gives.
func ValidateExportURL(raw string) error {
	if err := checkHTTPURL(raw); err != nil {
		return err
	}
	if hasCredentials(raw) {
		return fmt.Errorf("%q carries credentials, which would be stored in plain text in the manifests, in git and in the cluster: "+
			"give the receiver's credentials as a header instead (options.export.headers in the scenario, read from a Secret)", redact.URL(raw))
	}
	return nil
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", redact.URL(raw))
	}
	return nil
}

// hasCredentials reports a user:password@ or a secret-looking query
// parameter (api_key=, token=...) in a URL.
func hasCredentials(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.User != nil || len(redact.URLSecrets(raw)) > 0
}

// validateExports checks every --export: a known kind, once, and a URL
// fit for the manifests.
func validateExports(targets []plan.ExportTarget) error {
	seen := map[string]bool{}
	for _, t := range targets {
		if t.Kind != plan.ExportPrometheusRW && t.Kind != plan.ExportOTLP {
			return fmt.Errorf("%s=...: unknown kind %q (want %s)", t.Kind, t.Kind, strings.Join(plan.ExportKinds(), " or "))
		}
		if seen[t.Kind] {
			return fmt.Errorf("%s given twice (one receiver per kind)", t.Kind)
		}
		seen[t.Kind] = true
		if err := ValidateExportURL(t.URL); err != nil {
			return fmt.Errorf("%s=%v", t.Kind, err)
		}
	}
	return nil
}

// ValidateListen checks a --listen address for the pods: host:port or
// :port, the port 1 to 65535 (a port picked at random could not be
// declared to a Prometheus). The host is replaced (podListen).
func ValidateListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want :PORT, e.g. :9464 (%v)", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535, declared as the pods' port \"metrics\"", addr)
	}
	return nil
}

// podListen is a valid --listen address made to bind every interface of
// the pod, since a Prometheus scrapes the pod's IP: 127.0.0.1:9464 (as
// on a workstation) would be unreachable. ":PORT" binds IPv4 and IPv6
// alike; 0.0.0.0 and :: are kept as given. The warning says what was
// rewritten.
func podListen(addr string) (listen, warning string) {
	if addr == "" {
		return "", ""
	}
	host, port, _ := net.SplitHostPort(addr)
	switch host {
	case "", "0.0.0.0", "::":
		return addr, ""
	}
	return ":" + port, fmt.Sprintf("--listen %s: a Prometheus scrapes the pod's own address, so the segments listen on :%s (every interface of the pod) instead", addr, port)
}

// serviceName refuses, with --listen, a run name that makes no Service
// name: NAME-metrics must be a DNS-1035 label (a letter first, 63
// characters at most).
func (s Spec) serviceName() error {
	if s.Listen == "" || s.Name == "" {
		return nil
	}
	name := s.Name + MetricsSuffix
	if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
		return fmt.Errorf("%q: with --listen the Service %s must be a DNS-1035 label, starting with a letter, at most 63 characters (%s)", s.Name, name, msgs[0])
	}
	return nil
}

func validateLabel(s string) error {
	if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
		return fmt.Errorf("%q: %s", s, msgs[0])
	}
	return nil
}

// validateIf checks s when it is set.
func validateIf(s string, check func(string) error) error {
	if s == "" {
		return nil
	}
	return check(s)
}

// validateSubdomain checks an object name.
func validateSubdomain(s string) error {
	if msgs := validation.IsDNS1123Subdomain(s); len(msgs) > 0 {
		return fmt.Errorf("%q: %s", s, msgs[0])
	}
	return nil
}

// ValidateStartIn checks the lead to a fixed barrier: it must lie ahead.
func ValidateStartIn(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%v: the barrier must lie ahead", d)
	}
	return nil
}

// validateStartIn checks a StartIn that is set (0 is the readiness
// barrier).
func validateStartIn(d time.Duration) error {
	if d == 0 {
		return nil
	}
	return ValidateStartIn(d)
}

// ValidateReadyTimeout checks how long the segments may wait for the
// last one to be ready: above 0, at most MaxReadyTimeout.
func ValidateReadyTimeout(d time.Duration) error {
	if d <= 0 || d > MaxReadyTimeout {
		return fmt.Errorf("%v: want a wait above 0 and at most %v, e.g. 10m", d, MaxReadyTimeout)
	}
	return nil
}

// validateReadyTimeout checks a ReadyTimeout that is set, which only the
// readiness barrier has.
func (s Spec) validateReadyTimeout() error {
	switch {
	case s.ReadyTimeout == 0:
		return nil
	case s.StartIn != 0:
		return errors.New("applies to the readiness barrier, and --start-in sets a fixed one: give one of them")
	}
	return ValidateReadyTimeout(s.ReadyTimeout)
}

// ValidateHistory checks a --history DSN for the merge pod: SQLite, in a
// file of the results' claim. The pod's own files go with the pod, and a
// PostgreSQL DSN would put its password in the manifests.
func ValidateHistory(dsn string) error {
	scheme, rest, _ := strings.Cut(dsn, ":")
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
	case "postgres", "postgresql":
		return fmt.Errorf("%q: a PostgreSQL DSN would stand in the manifests in plain text, password and all: "+
			"put it in a Secret (kubectl create secret generic NAME --from-literal=%s=postgres://...) and name it with --history-secret NAME",
			redact.URL(dsn), HistorySecretKey)
	default:
		return fmt.Errorf("%q: want sqlite:%s/FILE (a file in the results' claim), or a PostgreSQL DSN in a Secret named by --history-secret", redact.URL(dsn), ResultsDir)
	}
	file, _, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
	if !strings.HasPrefix(file, ResultsDir+"/") || path.Clean(file) != file {
		return fmt.Errorf("%q: the merge pod keeps only what it writes to the results' claim, mounted at %s: name a file there, e.g. sqlite:%s/history.db",
			dsn, ResultsDir, ResultsDir)
	}
	return nil
}

// historyConflict refuses two stores for one merge.
func (s Spec) historyConflict() error {
	if s.History != "" && s.HistorySecret != "" {
		return errors.New("and --history both name a store: give one of them")
	}
	return nil
}

// labelsNeedHistory refuses labels nothing would store, and labels the
// merge's --label would refuse.
func (s Spec) labelsNeedHistory() error {
	if len(s.Labels) > 0 && s.History == "" && s.HistorySecret == "" {
		return errors.New("has no effect without --history sqlite:FILE or --history-secret NAME")
	}
	for k, v := range s.Labels {
		if k == "" || strings.Contains(k, "=") || strings.ContainsAny(v, "\n\r\x00") {
			return fmt.Errorf("%q=%q: want key=value, the key without '=' and the value on one line", k, v)
		}
	}
	return nil
}
