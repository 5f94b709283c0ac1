package api

import (
	"testing"
	"time"
)

func TestNormalDraw(t *testing.T) {
	tests := []struct {
		z            float64
		mean, stddev time.Duration
		want         time.Duration
	}{
		{0, time.Second, 100 * time.Millisecond, time.Second},
		{1, time.Second, 100 * time.Millisecond, 1100 * time.Millisecond},
		{-2, time.Second, 100 * time.Millisecond, 800 * time.Millisecond},
		{-20, time.Second, 100 * time.Millisecond, 0}, // clamped, never negative
		{-1, 0, time.Second, 0},
		{3, time.Second, 0, time.Second},
		{1e300, time.Second, time.Second, time.Duration(maxThink)},
	}
	for _, tt := range tests {
		if got := normalDraw(tt.z, tt.mean, tt.stddev); got != tt.want {
			t.Errorf("normalDraw(%v, %v, %v) = %v, want %v", tt.z, tt.mean, tt.stddev, got, tt.want)
		}
	}
}
