package kube

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
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
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", redact.URL(raw))
	}
	if u.User != nil || len(redact.URLSecrets(raw)) > 0 {
		return fmt.Errorf("%q carries credentials, which would be written into the manifests in plain text: put the API key in a Secret (key api-key) and name it with --secret", redact.URL(raw))
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

func validateStartIn(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%v: the barrier must lie ahead", d)
	}
	return nil
}
