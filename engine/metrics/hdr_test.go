package metrics

import (
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmload/llmload/engine"
)

// hdrPercentiles are the percentiles the round-trip tests read back.
var hdrPercentiles = []float64{0, 1, 10, 50, 90, 95, 99, 99.9, 99.99, 100}

// lognormalRecorder records n lognormal latencies around median ms.
func lognormalRecorder(g geometry, seed uint64, n int, median float64) *recorder {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := newRecorder(g)
	for range n {
		ms := median * rng.ExpFloat64() * rng.ExpFloat64()
		r.record(time.Duration(ms * float64(time.Millisecond)))
	}
	return &r
}

func TestHDRRoundTrip(t *testing.T) {
	for name, g := range map[string]geometry{"dense": durationGeo, "sparse": sparseDurationGeo} {
		r := lognormalRecorder(g, 1, 5000, 80)
		d := r.t.dist()
		h, err := d.HDRHistogram()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := h.TotalCount(), d.Count; got != want {
			t.Errorf("%s: decoded count %d, want %d", name, got, want)
		}
		for _, p := range hdrPercentiles {
			if got, want := h.ValueAtPercentile(p), r.t.pos.ValueAtPercentile(p); got != want {
				t.Errorf("%s: decoded p%v = %d ticks, want %d", name, p, got, want)
			}
		}
	}
}

// TestHDRDenseAndSparseAgree checks that a distribution encodes to one
// text whichever histogram type recorded it, so files do not depend on
// which aggregation path a dist took.
func TestHDRDenseAndSparseAgree(t *testing.T) {
	dense := lognormalRecorder(durationGeo, 2, 300, 50).t.dist().HDR
	sparse := lognormalRecorder(sparseDurationGeo, 2, 300, 50).t.dist().HDR
	if dense == "" || dense != sparse {
		t.Errorf("dense and sparse encodings differ:\n%s\n%s", dense, sparse)
	}
}

// TestHDRMergeExact decodes two stages' histograms, merges them, and
// checks the result against merging the live trends: the same
// percentiles and the same encoding, so segment results merge exactly.
func TestHDRMergeExact(t *testing.T) {
	a, b := lognormalRecorder(durationGeo, 3, 4000, 100), lognormalRecorder(durationGeo, 4, 700, 300)
	want := mergeTrends([]*trend{&a.t, &b.t})
	ha, err := DecodeHDR(a.t.dist().HDR)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := DecodeHDR(b.t.dist().HDR)
	if err != nil {
		t.Fatal(err)
	}
	if dropped := ha.Merge(hb); dropped != 0 {
		t.Fatalf("merge dropped %d values", dropped)
	}
	for _, p := range hdrPercentiles {
		if got, want := ha.ValueAtPercentile(p), want.pos.ValueAtPercentile(p); got != want {
			t.Errorf("merged p%v = %d ticks, want %d", p, got, want)
		}
	}
	enc, _ := ha.Encode()
	if got, want := string(enc), want.dist().HDR; got != want {
		t.Errorf("merged histogram encodes differently from the merged trend's")
	}
}

func TestHDRBucketEdges(t *testing.T) {
	for _, v := range []int64{0, 1, 2047, 2048, 2049, 4095, 4096, 100_000, 123_456, 3_599_999_999} {
		h := hdrhistogram.NewPacked(1, highestUS, sigFigs)
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		b := HDRBuckets(h)
		if len(b) != 1 || b[0].Lo > v || b[0].Hi < v || b[0].Count != 1 {
			t.Fatalf("value %d: buckets %+v", v, b)
		}
		if got, want := b[0].Hi, h.ValueAtPercentile(100); got != want {
			t.Errorf("value %d: Hi = %d, want HDR's highest equivalent %d", v, got, want)
		}
		next := hdrhistogram.NewPacked(1, highestUS, sigFigs)
		next.RecordValue(b[0].Hi + 1)
		if got := HDRBuckets(next)[0].Lo; got != b[0].Hi+1 {
			t.Errorf("value %d: the next bucket starts at %d, want %d", v, got, b[0].Hi+1)
		}
	}
}

// validHDR is a small well-formed encoding, for the error cases to damage.
func validHDR(t testing.TB) string {
	t.Helper()
	return lognormalRecorder(sparseDurationGeo, 5, 50, 20).t.dist().HDR
}

func TestDecodeHDRErrors(t *testing.T) {
	ok := validHDR(t)
	raw, _ := base64.StdEncoding.DecodeString(ok)
	other := hdrhistogram.New(1, 1e6, 2)
	other.RecordValue(5)
	otherEnc, _ := other.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	empty, _ := hdrhistogram.NewPacked(1, highestUS, sigFigs).Encode()
	tests := map[string]struct {
		in   string
		want string
	}{
		"not base64":      {"not base64!", "illegal base64"},
		"too short":       {base64.StdEncoding.EncodeToString([]byte{1, 2}), "too short"},
		"wrong cookie":    {base64.StdEncoding.EncodeToString(append([]byte{0, 0, 0, 0}, raw[4:]...)), "only V2"},
		"truncated":       {base64.StdEncoding.EncodeToString(raw[:len(raw)-5]), "smaller than"},
		"flipped byte":    {base64.StdEncoding.EncodeToString(flip(raw, len(raw)-3)), "corrupt"},
		"other geometry":  {string(otherEnc), "geometry"},
		"empty histogram": {string(empty), "no values"},
		"huge":            {strings.Repeat("A", maxHDRLen+1), "more than"},
	}
	for name, tc := range tests {
		h, err := DecodeHDR(tc.in)
		if h != nil || !errors.Is(err, ErrHDR) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DecodeHDR = %v, %v; want an ErrHDR containing %q", name, h, err, tc.want)
		}
	}
	if _, err := (Dist{Count: 51, HDR: ok}).HDRHistogram(); !errors.Is(err, ErrHDR) || !strings.Contains(err.Error(), "counts 51") {
		t.Errorf("count mismatch: err = %v", err)
	}
	if h, err := (Dist{Count: 3}).HDRHistogram(); h != nil || err != nil {
		t.Errorf("no histogram: got %v, %v; want nil, nil", h, err)
	}
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x55
	return out
}

// FuzzDecodeHDR checks that no input panics, and that whatever decodes
// is a consistent histogram that survives a second round trip.
func FuzzDecodeHDR(f *testing.F) {
	ok := validHDR(f)
	raw, _ := base64.StdEncoding.DecodeString(ok)
	f.Add(ok)
	f.Add(lognormalRecorder(durationGeo, 6, 2000, 500).t.dist().HDR)
	f.Add(base64.StdEncoding.EncodeToString(raw[:len(raw)/2]))
	f.Add(base64.StdEncoding.EncodeToString(flip(raw, 12)))
	f.Add("")
	f.Add("HISTFAAAAB")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeHDR(s)
		if err != nil {
			if !errors.Is(err, ErrHDR) {
				t.Fatalf("error %v does not wrap ErrHDR", err)
			}
			return
		}
		var sum int64
		for _, b := range HDRBuckets(h) {
			if b.Count <= 0 || b.Lo > b.Hi {
				t.Fatalf("bad bucket %+v", b)
			}
			sum += b.Count
		}
		if sum < h.TotalCount() {
			t.Fatalf("buckets hold %d values, total says %d", sum, h.TotalCount())
		}
		enc, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeHDR(string(enc))
		if err != nil || again.TotalCount() != h.TotalCount() {
			t.Fatalf("re-encoded histogram does not decode: %v", err)
		}
	})
}

// TestHDRSizeAndTime reports what the field costs a stage: the bytes
// of JSON and the time to encode, for a typical latency distribution.
func TestHDRSizeAndTime(t *testing.T) {
	for _, n := range []int{100, 1000, 100_000} {
		r := lognormalRecorder(durationGeo, 7, n, 100)
		start := time.Now()
		const reps = 20
		var s string
		for range reps {
			s = encodeHDR(r.t.pos)
		}
		per := time.Since(start) / reps
		t.Logf("%7d values: %5d bytes encoded, %v to encode", n, len(s), per)
		if len(s) > 16<<10 {
			t.Errorf("%d values encode to %d bytes, want under 16 KB", n, len(s))
		}
	}
}

// TestHDRBucketAt: the bucket holding a tick is the one HDRBuckets lists
// for it, at both its ends, across the unit-width and the widening ranges.
func TestHDRBucketAt(t *testing.T) {
	c := NewCollector()
	c.StageStarted(engine.StageMark{Scenario: "s", Stage: "c1", Target: 1, At: at(0)})
	for _, ms := range []float64{0.001, 1.5, 2.047, 2.049, 37.3, 999.9, 61_000} {
		c.Sample(req("s", "c1", 1, ms, ms, 0, nil))
	}
	c.StageEnded(engine.StageMark{Scenario: "s", Stage: "c1", At: at(10)})
	h, err := c.Close().Stages[0].TTFT.HDRHistogram()
	if err != nil || h == nil {
		t.Fatalf("histogram: %v, %v", h, err)
	}
	for _, b := range HDRBuckets(h) {
		if got := HDRBucketAt(b.Lo); got.Lo != b.Lo || got.Hi != b.Hi {
			t.Errorf("HDRBucketAt(%d) = %+v, want %+v", b.Lo, got, b)
		}
		if got := HDRBucketAt(b.Hi); got.Lo != b.Lo || got.Hi != b.Hi {
			t.Errorf("HDRBucketAt(%d) = %+v, want %+v", b.Hi, got, b)
		}
	}
}
