package metrics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// cachedSample is a successful request of stage with in input tokens
// counted by source, of which cached came from the prefix cache.
func cachedSample(stage string, in, cached int, source string) engine.Sample {
	s := okSample(stage, 1, 100*time.Millisecond)
	s.InputTokens, s.InputTokensSource, s.CachedTokens = in, source, cached
	return s
}

// prefixWant is a stage's expected prefix-cache figures; share < 0 means
// absent.
type prefixWant struct {
	stage                    string
	usageIn, cached, cachedN int64
	share                    float64
}

func TestPrefixHitShare(t *testing.T) {
	usage, tok := engine.TokensFromUsage, engine.TokensFromTokenizer
	failed := cachedSample("a", 100, 90, usage)
	failed.Err = &engine.Error{Class: engine.ErrConnReset}
	dirty := cachedSample("a", 100, 90, usage)
	dirty.Dirty = "empty"
	warm := cachedSample("a", 100, 90, usage)
	warm.Warmup = true
	for _, tc := range []struct {
		name    string
		samples []engine.Sample
		want    []prefixWant
	}{
		{"never reported: no share, not 0%",
			[]engine.Sample{cachedSample("a", 100, 0, usage), cachedSample("a", 50, 0, usage)},
			[]prefixWant{{"a", 150, 0, 0, -1}}},
		{"reported: exact",
			[]engine.Sample{cachedSample("a", 100, 64, usage), cachedSample("a", 300, 0, usage), cachedSample("a", 100, 36, usage)},
			[]prefixWant{{"a", 500, 100, 2, 0.2}}},
		{"only the server's input counts, only clean successes",
			[]engine.Sample{cachedSample("a", 200, 50, usage), cachedSample("a", 1000, 900, tok), failed, dirty, warm},
			[]prefixWant{{"a", 200, 50, 1, 0.25}}},
		{"a hit anywhere in the run: a stage without hits shows 0",
			[]engine.Sample{cachedSample("a", 100, 25, usage), cachedSample("b", 80, 0, usage), cachedSample("c", 80, 0, tok)},
			[]prefixWant{{"a", 100, 25, 1, 0.25}, {"b", 80, 0, 0, 0}, {"c", 0, 0, 0, -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			for _, s := range tc.samples {
				c.Sample(s)
			}
			sum := c.Close()
			for _, w := range tc.want {
				st := findStage(t, sum, w.stage)
				if st.UsageInputTokens != w.usageIn || st.CachedTokens != w.cached || st.CachedRequests != w.cachedN {
					t.Errorf("%s: usage input, cached tokens, cached requests = %d %d %d, want %d %d %d", w.stage,
						st.UsageInputTokens, st.CachedTokens, st.CachedRequests, w.usageIn, w.cached, w.cachedN)
				}
				switch {
				case w.share < 0 && st.PrefixHitShare != nil:
					t.Errorf("%s: prefix hit share = %v, want absent", w.stage, *st.PrefixHitShare)
				case w.share >= 0 && st.PrefixHitShare == nil:
					t.Errorf("%s: prefix hit share absent, want %v", w.stage, w.share)
				case w.share >= 0 && *st.PrefixHitShare != w.share:
					t.Errorf("%s: prefix hit share = %v, want %v", w.stage, *st.PrefixHitShare, w.share)
				}
			}
		})
	}
}

// TestPrefixFieldsAbsentFromJSON: a stage of a server that reports no
// usage writes none of the prefix-cache keys, so old files and new ones
// of such runs read alike.
func TestPrefixFieldsAbsentFromJSON(t *testing.T) {
	c := NewCollector()
	c.Sample(cachedSample("a", 10, 0, engine.TokensFromTokenizer))
	b, err := json.Marshal(findStage(t, c.Close(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"usage_input_tokens", "cached_tokens", "cached_requests", "prefix_hit_share"} {
		if strings.Contains(string(b), `"`+key+`"`) {
			t.Errorf("stage JSON has %q: %s", key, b)
		}
	}
}

func TestRunPrefixHitShare(t *testing.T) {
	stages := []StageSummary{{UsageInputTokens: 100, CachedTokens: 30, CachedRequests: 1}, {UsageInputTokens: 300, CachedTokens: 10, CachedRequests: 1}}
	if got := RunPrefixHitShare(stages); got == nil || *got != 0.1 {
		t.Errorf("run share = %v, want 0.1", got)
	}
	for i := range stages {
		stages[i].CachedTokens, stages[i].CachedRequests = 0, 0
	}
	if got := RunPrefixHitShare(stages); got != nil {
		t.Errorf("run share without a hit = %v, want nil", *got)
	}
}

// askedSample is cachedSample from a prompt whose first shared of tokens
// were built to repeat the shared prefix.
func askedSample(stage string, in, cached int, source string, shared, tokens int) engine.Sample {
	s := cachedSample(stage, in, cached, source)
	s.PrefixAsked = engine.PrefixAsked{Shared: shared, Tokens: tokens}
	return s
}

func TestPrefixTarget(t *testing.T) {
	usage, tok := engine.TokensFromUsage, engine.TokensFromTokenizer
	failed := askedSample("a", 100, 90, usage, 60, 100)
	failed.Err = &engine.Error{Class: engine.ErrConnReset}
	warm := askedSample("a", 100, 90, usage, 60, 100)
	warm.Warmup = true
	served := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name    string
		samples []engine.Sample
		want    *PrefixTarget // of stage a
	}{
		{"no prompt asked: absent",
			[]engine.Sample{cachedSample("a", 100, 64, usage)}, nil},
		{"asked and served, over the same requests",
			[]engine.Sample{askedSample("a", 107, 48, usage, 60, 100), askedSample("a", 207, 112, usage, 120, 200),
				cachedSample("a", 1000, 1000, usage)}, // asked nothing: in the stage's share, not the target's
			&PrefixTarget{Requests: 2, PromptTokens: 300, SharedTokens: 180, AskedShare: 0.6,
				UsageInputTokens: 314, CachedTokens: 160, ServedShare: served(160.0 / 314)}},
		{"mixed shares sum exactly",
			[]engine.Sample{askedSample("a", 100, 16, usage, 30, 100), askedSample("a", 300, 272, usage, 285, 300)},
			&PrefixTarget{Requests: 2, PromptTokens: 400, SharedTokens: 315, AskedShare: 315.0 / 400,
				UsageInputTokens: 400, CachedTokens: 288, ServedShare: served(0.72)}},
		{"the server never said: asked, not served (never 0%)",
			[]engine.Sample{askedSample("a", 100, 0, usage, 60, 100)},
			&PrefixTarget{Requests: 1, PromptTokens: 100, SharedTokens: 60, AskedShare: 0.6, UsageInputTokens: 100}},
		{"a hit elsewhere in the run: 0% said",
			[]engine.Sample{askedSample("a", 100, 0, usage, 0, 100), cachedSample("b", 100, 50, usage)},
			&PrefixTarget{Requests: 1, PromptTokens: 100, AskedShare: 0, UsageInputTokens: 100, ServedShare: served(0)}},
		{"no usage: the server's counts are left out",
			[]engine.Sample{askedSample("a", 100, 0, tok, 60, 100), askedSample("a", 100, 48, usage, 60, 100)},
			&PrefixTarget{Requests: 2, PromptTokens: 200, SharedTokens: 120, AskedShare: 0.6,
				UsageInputTokens: 100, CachedTokens: 48, ServedShare: served(0.48)}},
		{"only clean successes outside warmup",
			[]engine.Sample{failed, warm, askedSample("a", 100, 50, usage, 50, 100)},
			&PrefixTarget{Requests: 1, PromptTokens: 100, SharedTokens: 50, AskedShare: 0.5,
				UsageInputTokens: 100, CachedTokens: 50, ServedShare: served(0.5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			for _, s := range tc.samples {
				c.Sample(s)
			}
			got := findStage(t, c.Close(), "a").PrefixTarget
			if a, b := jsonOf(t, got), jsonOf(t, tc.want); a != b {
				t.Errorf("prefix target = %s, want %s", a, b)
			}
		})
	}
}
