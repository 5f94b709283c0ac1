package servermetrics

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := map[string]struct {
		h      histogram
		q      float64
		want   float64
		wantOK bool
	}{
		"interpolates in the bucket": {histogram{[]float64{0.1, 0.2, inf}, []float64{0, 100, 100}}, 0.5, 0.15, true},
		"first bucket from zero":     {histogram{[]float64{0.1, 0.2, inf}, []float64{100, 100, 100}}, 0.5, 0.05, true},
		"rank on a bucket edge":      {histogram{[]float64{0.1, 0.2, inf}, []float64{50, 100, 100}}, 0.5, 0.1, true},
		"inf bucket: highest bound":  {histogram{[]float64{0.1, 0.2, inf}, []float64{0, 0, 10}}, 0.99, 0.2, true},
		"p99 with a tail":            {histogram{[]float64{0.1, 1, inf}, []float64{90, 100, 100}}, 0.99, 0.91, true},
		"no observations":            {histogram{[]float64{0.1, inf}, []float64{0, 0}}, 0.5, 0, false},
		"only the inf bucket":        {histogram{[]float64{inf}, []float64{5}}, 0.5, 0, false},
	}
	for name, tt := range tests {
		got, ok := tt.h.quantile(tt.q)
		if ok != tt.wantOK || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: quantile(%v) = %v, %v; want %v, %v", name, tt.q, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestSince(t *testing.T) {
	inf := math.Inf(1)
	prev := histogram{[]float64{0.1, inf}, []float64{10, 20}}
	tests := map[string]struct {
		cur  histogram
		want []float64
	}{
		"delta":          {histogram{[]float64{0.1, inf}, []float64{15, 30}}, []float64{5, 10}},
		"reset":          {histogram{[]float64{0.1, inf}, []float64{3, 4}}, []float64{3, 4}},
		"layout changed": {histogram{[]float64{0.5, inf}, []float64{30, 30}}, []float64{30, 30}},
	}
	for name, tt := range tests {
		got := tt.cur.since(prev)
		if len(got.cum) != len(tt.want) {
			t.Fatalf("%s: since = %v, want %v", name, got.cum, tt.want)
		}
		for i := range tt.want {
			if got, want := got.cum[i], tt.want[i]; got != want {
				t.Errorf("%s: cum[%d] = %v, want %v", name, i, got, want)
			}
		}
	}
}
