package textfmt

import (
	"strings"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/metrics"
)

func TestFigures(t *testing.T) {
	tests := []struct{ got, want string }{
		{Count(1, "request", "requests"), "1 request"},
		{Count(0, "request", "requests"), "0 requests"},
		{Count(2, "request", "requests"), "2 requests"},
		{MS(0.1234), "0.123"},
		{MS(12.345), "12.3"},
		{MS(123.4), "123"},
		{DistMS(metrics.Dist{}, 5), "-"},
		{DistMS(metrics.Dist{Count: 1}, 0.5), "0.50"},
		{DistMS(metrics.Dist{Count: 1}, 42.25), "42.2"},
		{DistMS(metrics.Dist{Count: 1}, 420.6), "421"},
		{Load(41.5), "41.5"},
		{Load(12), "12"},
		{Load(0.25), "0.25"},
		{Clip("a\tb\nc"), "a b c"},
		{Clip(strings.Repeat("x", 30)), strings.Repeat("x", MaxWidth-1) + "…"},
		{KindList([]string{"a", "b"}), "a, b"},
		{KindList([]string{"1", "2", "3", "4", "5", "6", "7", "8"}), "1, 2, 3, 4, 5, 6, 2 more"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
	if Duration(1.5) != 1500*time.Microsecond {
		t.Errorf("Duration(1.5) = %v", Duration(1.5))
	}
}
