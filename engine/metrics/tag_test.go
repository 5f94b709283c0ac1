package metrics

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestByTag(t *testing.T) {
	c := NewCollector()
	c.StageStarted(mark("sweep", "c1", 0, 1, 0))
	for i, ttft := range []float64{100, 200, 300, 400} {
		tags := map[string]string{"prompt": "short", "scenario": "x", "stage": "y", "check": "z"}
		if i >= 2 {
			tags = map[string]string{"prompt": "long", "model": "m1"}
		}
		c.Sample(req("sweep", "c1", 1, ttft, ttft*10, 0, tags))
	}
	fail := failSample("c1", 2, "http_5xx:503")
	fail.Tags = map[string]string{"prompt": "long"}
	c.Sample(fail)
	c.Sample(okSample("c1", 3, time.Second)) // untagged: in no breakdown
	st := findStage(t, c.Close(), "c1")

	if got, want := fmt.Sprint(keysOf(st.ByTag)), "[model prompt]"; got != want {
		t.Errorf("tag keys = %s, want %s (scenario, stage and check are not user tags)", got, want)
	}
	short, long := st.ByTag["prompt"]["short"], st.ByTag["prompt"]["long"]
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"short requests", float64(short.Requests), 2},
		{"short ttft mean", short.TTFT.Mean, 150},
		{"short e2e max", short.E2E.Max, 2000},
		{"short tpot count", float64(short.TPOT.Count), 2},
		{"long requests (failed included)", float64(long.Requests), 3},
		{"long ok", float64(long.OK), 2},
		{"long failed", float64(long.Failed), 1},
		{"long ttft count (failed left out)", float64(long.TTFT.Count), 2},
		{"long ttft min", long.TTFT.Min, 300},
		{"model m1 requests", float64(st.ByTag["model"]["m1"].Requests), 2},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if len(long.TTFT.Histogram) == 0 || len(long.E2E.Histogram) == 0 || long.TPOT.Histogram != nil {
		t.Errorf("tag histograms: ttft %v, e2e %v, tpot %v; want ttft and e2e only",
			long.TTFT.Histogram, long.E2E.Histogram, long.TPOT.Histogram)
	}
	if long.TTFT.CI.P50 == (Interval{}) || len(long.TTFT.Unreliable) == 0 {
		t.Errorf("tag TTFT lacks its intervals: %+v", long.TTFT)
	}
}

func TestByTagCaps(t *testing.T) {
	c := NewCollector()
	for i := range MaxTagValues + 5 {
		tags := map[string]string{"id": fmt.Sprint(i)}
		for range 3 {
			c.Sample(req("sweep", "c1", 0, 100, 1000, 0, tags))
		}
	}
	wide := map[string]string{}
	for k := range MaxTagKeys + 3 {
		wide[fmt.Sprintf("k%02d", k)] = "v"
	}
	c.Sample(req("sweep", "c2", 0, 100, 1000, 0, wide))
	c.Sample(req("sweep", "c2", 0, 100, 1000, 0, wide))
	sum := c.Close()
	ids := findStage(t, sum, "c1").ByTag["id"]
	if got, want := len(ids), MaxTagValues+1; got != want {
		t.Errorf("%d values of id, want %d (the cap and %s)", got, want, OtherTagValue)
	}
	if got, want := ids[OtherTagValue].Requests, int64(5*3); got != want {
		t.Errorf("%s requests = %d, want %d", OtherTagValue, got, want)
	}
	if got, want := ids["0"].Requests, int64(3); got != want {
		t.Errorf("id 0 requests = %d, want %d", got, want)
	}
	c2 := findStage(t, sum, "c2")
	if got, want := len(c2.ByTag), MaxTagKeys; got != want {
		t.Errorf("%d tag keys broken down, want %d", got, want)
	}
	if got, want := c2.TagKeysOverflow, int64(3*2); got != want {
		t.Errorf("tag keys overflow = %d, want %d", got, want)
	}
	if findStage(t, sum, "c1").TagKeysOverflow != 0 || len(findStage(t, sum, "c1").ByTag) != 1 {
		t.Error("the key cap counts per stage")
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
