package luaval

import "testing"

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"duration", "duration", 0},
		{"durtion", "duration", 1}, {"scenarois", "scenarios", 2}, {"kitten", "sitting", 3},
		{"日本", "日本語", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUnknownKey(t *testing.T) {
	valid := []string{"target", "duration", "name", "ramp"}
	tests := []struct {
		key, want string
	}{
		{"durtion", "unknown key (did you mean duration?)"},
		{"Target", "unknown key (did you mean target?)"},
		{"nmae", "unknown key (did you mean name?)"},
		{"executor", "unknown key (valid keys: duration, name, ramp, target)"},
		{"1", "unknown key (valid keys: duration, name, ramp, target)"},
	}
	for _, tt := range tests {
		if got := UnknownKey(tt.key, valid); got != tt.want {
			t.Errorf("unknownKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
