package plan

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	tests := map[time.Duration]string{
		0: "0s", 90 * time.Second: "1m30s", 5 * time.Minute: "5m", 2 * time.Hour: "2h",
		90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s", 61*time.Minute + time.Second: "1h1m1s",
	}
	for d, want := range tests {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
