package metrics

import (
	"errors"
	"fmt"
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDRTicksPerMs is the unit of a Dist's HDR field: its histogram counts
// microsecond ticks, so a bucket value v is v/HDRTicksPerMs milliseconds.
const HDRTicksPerMs = ticksPerUnit

// maxHDRLen bounds the encoded text DecodeHDR accepts. A latency
// histogram of llmload's geometry holds at most 23,552 buckets, a few
// tens of KB encoded even with every bucket populated; more is not ours.
const maxHDRLen = 1 << 20

// ErrHDR is wrapped by every error DecodeHDR and Dist.HDRHistogram return
// for input that is not a latency histogram written by llmload.
var ErrHDR = errors.New("corrupt hdr histogram")

// encodeHDR encodes a latency histogram as hdrhistogram-go's V2
// compressed encoding in base64, the form other HDR tools read. Dense and
// packed histograms of one distribution encode to the same bytes. It
// returns "" only if the library fails, which leaves the Dist without a
// histogram (compare then falls back to intervals) rather than failing a
// whole result for want of an optional field.
func encodeHDR(h hist) string {
	var b []byte
	var err error
	switch h := h.(type) {
	case *hdrhistogram.Histogram:
		b, err = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	case *hdrhistogram.PackedHistogram:
		b, err = h.Encode()
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	return string(b)
}

// DecodeHDR decodes a Dist's HDR field into a sparse histogram of
// microsecond ticks. It rejects text that is not base64 of a V2
// compressed histogram, and histograms of another geometry than
// llmload's latencies (lowest value 1, three significant digits), whose
// buckets would not line up with the ones they are compared or merged
// with. It never panics, whatever the input.
func DecodeHDR(s string) (h *hdrhistogram.PackedHistogram, err error) {
	if len(s) > maxHDRLen {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a latency histogram needs", ErrHDR, len(s), maxHDRLen)
	}
	defer func() {
		// The library is hardened against corrupt streams; this keeps a
		// bug there from crashing a CI gate that reads a damaged file.
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("%w: %v", ErrHDR, r)
		}
	}()
	h, err = hdrhistogram.DecodePacked([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHDR, err)
	}
	if got, low := h.SignificantFigures(), h.LowestTrackableValue(); got != sigFigs || low != 1 {
		return nil, fmt.Errorf("%w: geometry (lowest %d, %d significant digits), want (1, %d)", ErrHDR, low, got, sigFigs)
	}
	if h.TotalCount() == 0 {
		return nil, fmt.Errorf("%w: no values", ErrHDR)
	}
	return h, nil
}

// HDRHistogram decodes d's HDR field; it returns nil and no error when
// d has none (an empty distribution, or a file written before the field
// existed). The histogram must hold exactly d.Count values.
func (d Dist) HDRHistogram() (*hdrhistogram.PackedHistogram, error) {
	if d.HDR == "" {
		return nil, nil
	}
	h, err := DecodeHDR(d.HDR)
	if err != nil {
		return nil, err
	}
	if got := h.TotalCount(); got != d.Count {
		return nil, fmt.Errorf("%w: %d values, but the distribution counts %d", ErrHDR, got, d.Count)
	}
	return h, nil
}

// HDRBucket is one populated bucket of a latency histogram: Count values
// between Lo and Hi microsecond ticks, both inclusive.
type HDRBucket struct {
	Lo, Hi, Count int64
}

// HDRBuckets lists h's populated buckets in ascending order. h must have
// DecodeHDR's geometry.
func HDRBuckets(h *hdrhistogram.PackedHistogram) []HDRBucket {
	out := make([]HDRBucket, 0, h.Populated())
	for v, c := range h.ForEachBucket {
		out = append(out, HDRBucket{Lo: v, Hi: v + bucketWidth(v) - 1, Count: c})
	}
	return out
}

// HDRBucketAt is the bucket of the latency geometry that holds tick v.
func HDRBucketAt(v int64) HDRBucket {
	w := bucketWidth(v)
	lo := v &^ (w - 1)
	return HDRBucket{Lo: lo, Hi: lo + w - 1}
}

// subBucketMask has the bits of the first, unit-width, bucket of the
// latency geometry: lowest value 1 and three significant digits give
// 2,048 sub-buckets, after which each bucket is twice as wide as the last.
const subBucketMask = 1<<11 - 1

// bucketWidth is the number of ticks HDR treats as equivalent to v, as
// hdrhistogram-go computes it for the latency geometry.
func bucketWidth(v int64) int64 {
	return 1 << (bits.Len64(uint64(v)|subBucketMask) - 11)
}
