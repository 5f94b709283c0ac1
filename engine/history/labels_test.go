package history

import (
	"maps"
	"strings"
	"testing"
)

func TestParseLabel(t *testing.T) {
	long := strings.Repeat("v", maxLabelValue)
	key64 := "k" + strings.Repeat("x", 63)
	tests := []struct {
		in         string
		key, value string
		err        string // a part of the error; "" for none
	}{
		{in: "branch=main", key: "branch", value: "main"},
		{in: "gpu.count=8", key: "gpu.count", value: "8"},
		{in: "_x-y=", key: "_x-y", value: ""},
		{in: "expr=a=b", key: "expr", value: "a=b"},
		{in: key64 + "=1", key: key64, value: "1"},
		{in: "k=" + long, key: "k", value: long},
		{in: "branch", err: "want key=value"},
		{in: "=main", err: `the key ""`},
		{in: "1st=x", err: `the key "1st"`},
		{in: "my key=x", err: `the key "my key"`},
		{in: "k/v=x", err: `the key "k/v"`},
		{in: key64 + "x=1", err: "at most 64"},
		{in: "k=" + long + "v", err: "longer than 256 bytes"},
		{in: "k=a\nb", err: "line break"},
		{in: "k=a\x00", err: "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.in[:min(len(tc.in), 20)], func(t *testing.T) {
			k, v, err := ParseLabel("--label", tc.in)
			if tc.err == "" {
				if err != nil || k != tc.key || v != tc.value {
					t.Errorf("ParseLabel(%q) = %q, %q, %v; want %q, %q", tc.in, k, v, err, tc.key, tc.value)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "--label") {
				t.Errorf("ParseLabel(%q) error %v, want one from --label saying %q", tc.in, err, tc.err)
			}
			if err != nil && len(err.Error()) > 400 {
				t.Errorf("the error quotes the whole value (%d bytes)", len(err.Error()))
			}
		})
	}
}

func TestParseLabels(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want map[string]string
		err  string
	}{
		{"none", nil, map[string]string{}, ""},
		{"several", []string{"a=1", "b=2"}, map[string]string{"a": "1", "b": "2"}, ""},
		{"a key twice, same value", []string{"a=1", "a=1"}, map[string]string{"a": "1"}, ""},
		{"a key twice, two values", []string{"a=1", "b=2", "a=3"}, nil, `a given twice ("1" and "3")`},
		{"a bad one", []string{"a=1", "oops"}, nil, "want key=value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLabels("--label", tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) || got == nil {
				t.Errorf("ParseLabels(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestCILabels(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"outside CI", map[string]string{"GITHUB_SHA": "abc", "CI_COMMIT_SHA": "def"}, map[string]string{}},
		{"GITHUB_ACTIONS not true", map[string]string{"GITHUB_ACTIONS": "false", "GITHUB_SHA": "abc"}, map[string]string{}},
		{"github push", map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main", "GITHUB_HEAD_REF": "",
			"GITHUB_JOB": "bench", "GITHUB_RUN_ID": "77", "GITHUB_REPOSITORY": "o/r",
		}, map[string]string{"ci": "github", "commit": "abc", "branch": "main", "job": "bench", "ci_run": "77", "repository": "o/r"}},
		// A pull request's GITHUB_REF_NAME is "123/merge": the branch is
		// GITHUB_HEAD_REF.
		{"github pull request", map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "123/merge", "GITHUB_HEAD_REF": "feature",
		}, map[string]string{"ci": "github", "commit": "abc", "branch": "feature"}},
		{"gitlab branch", map[string]string{
			"GITLAB_CI": "true", "CI_COMMIT_SHA": "def", "CI_COMMIT_BRANCH": "main", "CI_COMMIT_REF_NAME": "main",
			"CI_JOB_NAME": "bench", "CI_PIPELINE_ID": "9", "CI_PROJECT_PATH": "g/p",
		}, map[string]string{"ci": "gitlab", "commit": "def", "branch": "main", "job": "bench", "ci_run": "9", "repository": "g/p"}},
		{"gitlab merge request", map[string]string{
			"GITLAB_CI": "true", "CI_COMMIT_SHA": "def", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feat", "CI_COMMIT_REF_NAME": "refs/merge-requests/4/head",
		}, map[string]string{"ci": "gitlab", "commit": "def", "branch": "feat"}},
		{"buildkite", map[string]string{
			"BUILDKITE": "true", "BUILDKITE_COMMIT": "0ff", "BUILDKITE_BRANCH": "main", "BUILDKITE_LABEL": ":rocket: bench",
			"BUILDKITE_BUILD_NUMBER": "12", "BUILDKITE_PIPELINE_SLUG": "llm",
		}, map[string]string{"ci": "buildkite", "commit": "0ff", "branch": "main", "job": ":rocket: bench", "ci_run": "12", "repository": "llm"}},
		{"buildkite step key wins", map[string]string{"BUILDKITE": "true", "BUILDKITE_STEP_KEY": "bench", "BUILDKITE_LABEL": "Bench"},
			map[string]string{"ci": "buildkite", "job": "bench"}},
		{"a value with a line break is left out", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_JOB": "a\nb"},
			map[string]string{"ci": "github", "commit": "abc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CILabels(func(k string) string { return tc.env[k] })
			if !maps.Equal(got, tc.want) {
				t.Errorf("CILabels = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLabelsUserWins: a --label overrides what CI says.
func TestLabelsUserWins(t *testing.T) {
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REF_NAME": "main", "GITHUB_SHA": "abc"}
	got := Labels(func(k string) string { return env[k] }, map[string]string{"branch": "release", "gpu": "h100"})
	want := map[string]string{"ci": "github", "commit": "abc", "branch": "release", "gpu": "h100"}
	if !maps.Equal(got, want) {
		t.Errorf("Labels = %v, want %v", got, want)
	}
	if got, want := FormatLabels(want), "branch=release,ci=github,commit=abc,gpu=h100"; got != want {
		t.Errorf("FormatLabels = %q, want %q", got, want)
	}
}
