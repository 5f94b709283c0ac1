package sim

import (
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{strings.Repeat("x", 400), 100},
		{"什么是机器学习？", 8},
		{"今天 ok", 3},  // 2 Han + 3 ASCII quarters, rounded up
		{"こんにちは", 5},  // kana
		{"안녕", 2},     // Hangul
		{"héllo", 2},  // 4 ASCII + one accented rune = 6 quarters
		{"\u200b", 1}, // invisible, yet a token
		{"\xff\xfe", 1},
	}
	for _, tt := range tests {
		if got, want := CountTokens(tt.in), tt.want; got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", tt.in, got, want)
		}
	}
}
