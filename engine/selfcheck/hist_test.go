package selfcheck

import (
	"slices"
	"testing"
)

// An interval keeps only the buckets that counted, and adding intervals
// gives back the whole histogram's growth.
func TestDeltaKeepsCountedBuckets(t *testing.T) {
	tests := []struct {
		name        string
		before, now []uint64
		want        counts
	}{
		{"nothing new", []uint64{3, 4, 5}, []uint64{3, 4, 5}, nil},
		{"two buckets", []uint64{3, 4, 5, 0}, []uint64{3, 6, 5, 7}, counts{{1, 2}, {3, 7}}},
		{"first sample", nil, []uint64{0, 1}, counts{{1, 1}}},
		{"a counter that went back counts from zero", []uint64{9, 9}, []uint64{2, 9}, counts{{0, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := delta(tt.now, tt.before)
			if !slices.Equal(got, tt.want) {
				t.Errorf("delta = %v, want %v", got, tt.want)
			}
		})
	}
	sum := make([]uint64, 3)
	add(sum, delta([]uint64{1, 0, 2}, nil))
	add(sum, delta([]uint64{1, 5, 4}, []uint64{1, 0, 2}))
	add(sum, counts{{7, 1}}) // a bucket beyond the histogram is ignored
	if want := []uint64{1, 5, 4}; !slices.Equal(sum, want) {
		t.Errorf("sum of the intervals %v, want %v", sum, want)
	}
}
