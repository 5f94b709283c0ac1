package plan

import (
	"strings"
	"testing"
)

func TestParseSegment(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Segment
		wantErr string // a part of the error; "" for none
	}{
		"first of four":       {in: "0/4", want: Segment{Index: 0, Count: 4}},
		"last of four":        {in: "3/4", want: Segment{Index: 3, Count: 4}},
		"spaces around":       {in: " 1 / 4 ", want: Segment{Index: 1, Count: 4}},
		"one segment":         {in: "0/1", want: Segment{Index: 0, Count: 1}},
		"the most segments":   {in: "9999/10000", want: Segment{Index: 9999, Count: 10000}},
		"empty":               {in: "", wantErr: "want i/n"},
		"no slash":            {in: "1", wantErr: "want i/n"},
		"i equal to n":        {in: "4/4", wantErr: "0-based and must be below n (0 to 3)"},
		"negative i":          {in: "-1/4", wantErr: "0-based"},
		"no segments":         {in: "0/0", wantErr: "n must be between 1 and 10000"},
		"not numbers":         {in: "a/b", wantErr: "whole numbers"},
		"too many segments":   {in: "0/10001", wantErr: "n must be between 1 and 10000"},
		"two slashes":         {in: "1/4/5", wantErr: "whole numbers"},
		"fraction":            {in: "0.5/4", wantErr: "whole numbers"},
		"negative n":          {in: "0/-4", wantErr: "n must be between"},
		"spaces inside a num": {in: "1 0/40", wantErr: "whole numbers"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSegment(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSegment(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), `"`+tc.in+`"`) {
					t.Errorf("error %q does not quote the input", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSegment(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestSegmentShareSplitsExactly(t *testing.T) {
	tests := map[string]struct {
		total int
		count int
		want  []int
	}{
		"10 VUs in 4":          {total: 10, count: 4, want: []int{3, 3, 2, 2}},
		"fewer than segments":  {total: 2, count: 4, want: []int{1, 1, 0, 0}},
		"none":                 {total: 0, count: 3, want: []int{0, 0, 0}},
		"one":                  {total: 1, count: 7, want: []int{1, 0, 0, 0, 0, 0, 0}},
		"even":                 {total: 12, count: 3, want: []int{4, 4, 4}},
		"one segment":          {total: 5, count: 1, want: []int{5}},
		"negative: nobody has": {total: -3, count: 2, want: []int{0, 0}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for i, want := range tc.want {
				if got := (Segment{Index: i, Count: tc.count}).Share(tc.total); got != want {
					t.Errorf("segment %d/%d: Share(%d) = %d, want %d", i, tc.count, tc.total, got, want)
				}
			}
		})
	}
}

// Every segment's share adds up to the whole, for any total and count,
// and the shares differ by at most one, the larger first.
func TestSegmentSharesSumToTheTotal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 7, 10, 64, 1000} {
		for total := 0; total <= 300; total++ {
			sum, prev := 0, total+1
			for i := range n {
				s := Segment{Index: i, Count: n}.Share(total)
				if s > prev || prev-s > 1 && i > 0 {
					t.Fatalf("n=%d total=%d: segment %d has %d after %d", n, total, i, s, prev)
				}
				sum, prev = sum+s, s
			}
			if sum != total {
				t.Fatalf("n=%d total=%d: shares sum to %d", n, total, sum)
			}
		}
	}
}

func TestWholeSegment(t *testing.T) {
	for _, s := range []Segment{{}, {Index: 0, Count: 1}} {
		if !s.Whole() || s.String() != "" {
			t.Errorf("%#v: Whole %v, String %q; want the whole plan", s, s.Whole(), s.String())
		}
		if got := s.Share(17); got != 17 {
			t.Errorf("%#v: Share(17) = %d", s, got)
		}
		for k := range int64(10) {
			if !s.Owns(k) || s.Global(k) != k {
				t.Errorf("%#v: Owns(%d) %v, Global(%d) = %d", s, k, s.Owns(k), k, s.Global(k))
			}
		}
	}
	if s := (Segment{Index: 2, Count: 5}); s.Whole() || s.String() != "2/5" {
		t.Errorf("2/5: Whole %v, String %q", s.Whole(), s.String())
	}
}

// Exactly one segment owns each item, the one at k mod n.
func TestSegmentOwns(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7} {
		for k := range int64(100) {
			owners := 0
			for i := range n {
				if (Segment{Index: i, Count: n}).Owns(k) {
					owners++
					if int64(i) != k%int64(n) {
						t.Errorf("n=%d: item %d owned by segment %d", n, k, i)
					}
				}
			}
			if owners != 1 {
				t.Errorf("n=%d: item %d has %d owners", n, k, owners)
			}
		}
	}
}

// The segments' local ids map to disjoint global ids that together are
// 1..total when every segment makes its share; the global id of a local
// item is one its segment owns.
func TestSegmentGlobalIsDisjointAndCovering(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7} {
		for _, total := range []int{0, 1, 3, 10, 29} {
			seen := map[int64]int{}
			for i := range n {
				s := Segment{Index: i, Count: n}
				for local := int64(1); local <= int64(s.Share(total)); local++ {
					g := s.Global(local)
					if prev, dup := seen[g]; dup {
						t.Fatalf("n=%d: global id %d of segments %d and %d", n, g, prev, i)
					}
					seen[g] = i
					if !s.Owns(g - 1) {
						t.Errorf("n=%d: segment %d's id %d is an item it does not own", n, i, g)
					}
				}
			}
			for g := int64(1); g <= int64(total); g++ {
				if _, ok := seen[g]; !ok {
					t.Errorf("n=%d total=%d: id %d in no segment", n, total, g)
				}
			}
			if len(seen) != total {
				t.Errorf("n=%d total=%d: %d ids", n, total, len(seen))
			}
		}
	}
	if got, want := (Segment{Index: 2, Count: 4}).Global(3), int64(11); got != want {
		t.Errorf("segment 2/4's third id = %d, want %d", got, want)
	}
	if got := (Segment{Index: 2, Count: 4}).Global(0); got != 0 {
		t.Errorf("Global(0) = %d, want 0 (no id)", got)
	}
}
