package metrics

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestBucketEdges(t *testing.T) {
	if got, want := fmt.Sprint(bucketEdgesMS[:8]), "[0.001 0.0015 0.002 0.003 0.005 0.007 0.01 0.015]"; got != want {
		t.Errorf("first edges = %s, want %s", got, want)
	}
	if last := bucketEdges[len(bucketEdges)-1]; last < float64(highestUS) {
		t.Errorf("last edge %v ticks is below the histogram's range %v", last, highestUS)
	}
	for i := 1; i < len(bucketEdges); i++ {
		if r := bucketEdges[i] / bucketEdges[i-1]; r < 1.3 || r > 1.7 {
			t.Errorf("edges %v → %v: ratio %.2f, want log spacing near 1.47", bucketEdges[i-1], bucketEdges[i], r)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	for _, tc := range []struct {
		name string
		ms   []float64
		want string // le_ms:count ...
	}{
		{"one value", []float64{42}, "[{50 1}]"},
		{"edges are inclusive", []float64{1, 1.5, 1.501, 2}, "[{1 1} {1.5 1} {2 2}]"},
		{"gaps kept, ends trimmed", []float64{0.9, 1.2, 1.5, 4, 4, 6, 1000},
			"[{1 1} {1.5 2} {2 0} {3 0} {5 2} {7 1} {10 0} {15 0} {20 0} {30 0} {50 0} {70 0} {100 0} {150 0} {200 0} {300 0} {500 0} {700 0} {1000 1}]"},
		{"max just past an edge", []float64{10, 1000.3}, "[{10 1} {15 0} {20 0} {30 0} {50 0} {70 0} {100 0} {150 0} {200 0} {300 0} {500 0} {700 0} {1000 0} {1500 1}]"},
		{"beyond an hour: clamped", []float64{3_000_000, 5_000_000}, "[{3e+06 1} {5e+06 1}]"},
	} {
		for _, g := range []geometry{durationGeo, sparseDurationGeo} {
			got := fmt.Sprint(trendOf(g, tc.ms).buckets())
			if got != tc.want {
				t.Errorf("%s (sparse %v): buckets = %s, want %s", tc.name, g.sparse, got, tc.want)
			}
		}
	}
}

func TestHistogramCoversEveryValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := NewCollector()
	for range 5000 {
		ms := 20 + rng.ExpFloat64()*300
		c.Sample(okSample("c1", 0, msD(ms)))
	}
	st := findStage(t, c.Close(), "c1")
	for name, d := range map[string]Dist{"ttft": st.TTFT, "e2e": st.E2E} {
		var sum int64
		for _, b := range d.Histogram {
			sum += b.Count
		}
		if sum != d.Count {
			t.Errorf("%s: histogram counts %d values, want %d", name, sum, d.Count)
		}
		h := d.Histogram
		if len(h) < 2 || h[0].LeMS < d.Min || h[len(h)-1].LeMS < d.Max || h[0].Count == 0 || h[len(h)-1].Count == 0 {
			t.Errorf("%s: histogram %v does not span [%v, %v] with non-empty ends", name, h, d.Min, d.Max)
		}
		if len(h) > 1 && h[len(h)-2].LeMS >= d.Max {
			t.Errorf("%s: trailing bucket beyond max %v: %v", name, d.Max, h)
		}
	}
	for name, d := range map[string]Dist{"ttfb": st.TTFB, "tpot": st.TPOT, "itl": st.ITL} {
		if d.Histogram != nil {
			t.Errorf("%s has a histogram; only ttft and e2e do", name)
		}
	}
	if st.TTFC.Histogram != nil || len(st.TTFT.Histogram) == 0 {
		t.Error("histograms: want them on ttft and e2e only")
	}
}

func TestHistogramEmpty(t *testing.T) {
	c := NewCollector()
	c.Sample(failSample("c1", 0, "conn_reset"))
	st := findStage(t, c.Close(), "c1")
	if st.TTFT.Histogram != nil || st.E2E.Histogram != nil {
		t.Errorf("histograms of no values: %v, %v; want nil", st.TTFT.Histogram, st.E2E.Histogram)
	}
}
