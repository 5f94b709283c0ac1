package history

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// labelKey is what a label's key may be: short, and safe in a URL, a
// shell and a column of a CSV.
var labelKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// maxLabelValue bounds a label's value; a commit message pasted by
// mistake would otherwise fill every listing.
const maxLabelValue = 256

// ParseLabel reads one "key=value" label; flag names the flag for errors.
func ParseLabel(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%s %q: want key=value, e.g. branch=main", flag, s)
	case !labelKey.MatchString(k):
		return "", "", fmt.Errorf("%s %q: the key %q must start with a letter or _ and hold only letters, digits, _ . - (at most 64)", flag, s, k)
	case len(v) > maxLabelValue:
		return "", "", fmt.Errorf("%s %q…: the value is longer than %d bytes", flag, s[:32], maxLabelValue)
	case strings.ContainsAny(v, "\n\r\x00"):
		return "", "", fmt.Errorf("%s %q: the value holds a line break or NUL", flag, s)
	}
	return k, v, nil
}

// ParseLabels reads repeated "key=value" flags; a key given twice is an
// error, since one of the two would be lost without a word.
func ParseLabels(flag string, list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range list {
		k, v, err := ParseLabel(flag, s)
		if err != nil {
			return nil, err
		}
		if old, dup := out[k]; dup && old != v {
			return nil, fmt.Errorf("%s: %s given twice (%q and %q)", flag, k, old, v)
		}
		out[k] = v
	}
	return out, nil
}

// ciVars are the variables each CI system sets for a job, by the label
// they fill; the first variable set wins.
var ciVars = []struct {
	ci, detect string
	labels     [][2]string // label, variable
}{
	{"github", "GITHUB_ACTIONS", [][2]string{
		{"commit", "GITHUB_SHA"},
		// A pull request's GITHUB_REF_NAME is "123/merge"; its branch
		// is GITHUB_HEAD_REF.
		{"branch", "GITHUB_HEAD_REF"}, {"branch", "GITHUB_REF_NAME"},
		{"job", "GITHUB_JOB"}, {"ci_run", "GITHUB_RUN_ID"}, {"repository", "GITHUB_REPOSITORY"},
	}},
	{"gitlab", "GITLAB_CI", [][2]string{
		{"commit", "CI_COMMIT_SHA"},
		{"branch", "CI_COMMIT_BRANCH"}, {"branch", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"}, {"branch", "CI_COMMIT_REF_NAME"},
		{"job", "CI_JOB_NAME"}, {"ci_run", "CI_PIPELINE_ID"}, {"repository", "CI_PROJECT_PATH"},
	}},
	{"buildkite", "BUILDKITE", [][2]string{
		{"commit", "BUILDKITE_COMMIT"},
		{"branch", "BUILDKITE_BRANCH"},
		{"job", "BUILDKITE_STEP_KEY"}, {"job", "BUILDKITE_LABEL"}, {"ci_run", "BUILDKITE_BUILD_NUMBER"},
		{"repository", "BUILDKITE_PIPELINE_SLUG"},
	}},
}

// CILabels reads the labels a CI job's environment gives: ci (github,
// gitlab or buildkite), commit, branch, job, ci_run and repository.
// Outside CI it returns none.
func CILabels(getenv func(string) string) map[string]string {
	out := map[string]string{}
	for _, c := range ciVars {
		if v := getenv(c.detect); v != "true" && v != "1" {
			continue
		}
		out["ci"] = c.ci
		for _, l := range c.labels {
			if _, done := out[l[0]]; done {
				continue
			}
			if v := strings.TrimSpace(getenv(l[1])); v != "" && len(v) <= maxLabelValue && !strings.ContainsAny(v, "\n\r\x00") {
				out[l[0]] = v
			}
		}
		return out
	}
	return out
}

// Labels are the CI's labels overridden by the user's.
func Labels(getenv func(string) string, user map[string]string) map[string]string {
	out := CILabels(getenv)
	for k, v := range user {
		out[k] = v
	}
	return out
}

// FormatLabels writes labels as "k=v,k=v", sorted by key.
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + labels[k])
	}
	return b.String()
}
