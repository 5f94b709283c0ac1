package tokenize

import (
	"strings"
	"sync"
	"testing"
)

func TestGet(t *testing.T) {
	tests := []struct {
		name, want string
		wantErr    bool
	}{
		{"", "cl100k_base", false},
		{"cl100k_base", "cl100k_base", false},
		{"o200k_base", "o200k_base", false},
		{"p50k_base", "p50k_base", false},
		{"r50k_base", "r50k_base", false},
		{"gpt2", "", true},
		{"CL100K_BASE", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Get(tt.name)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Get(%q): no error", tt.name)
				}
				for _, n := range names {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("error %q does not list %s", err, n)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Name(); got != tt.want {
				t.Errorf("Name() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGetSameCodec(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]Codec, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = Get("cl100k_base") }()
	}
	wg.Wait()
	def, _ := Get("")
	for i, c := range got {
		if c != def {
			t.Errorf("call %d returned a different codec", i)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	tests := []struct {
		enc, text string
		count     int
		roundTrip bool // invalid UTF-8 comes back with U+FFFD
	}{
		{"cl100k_base", "hello world", 2, true},
		{"o200k_base", "hello world", 2, true},
		{"cl100k_base", "", 0, true},
		{"cl100k_base", "什么是机器学习？", -1, true},
		{"o200k_base", "invalid \xff utf8", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.enc+"/"+tt.text, func(t *testing.T) {
			c, err := Get(tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			ids := c.Encode(tt.text)
			if got, want := c.Count(tt.text), len(ids); got != want {
				t.Errorf("Count = %d, len(Encode) = %d", got, want)
			}
			if tt.count >= 0 && len(ids) != tt.count {
				t.Errorf("Count(%q) = %d, want %d", tt.text, len(ids), tt.count)
			}
			if got := c.Decode(ids); tt.roundTrip && got != tt.text {
				t.Errorf("Decode(Encode(%q)) = %q", tt.text, got)
			}
		})
	}
}

func TestDecodeSkipsUnknownIDs(t *testing.T) {
	c, _ := Get("cl100k_base")
	ids := c.Encode("hello world")
	bad := append([]uint{1 << 30}, ids...)
	if got, want := c.Decode(bad), "hello world"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
}

func TestConcurrentCount(t *testing.T) {
	c, _ := Get("o200k_base")
	want := c.Count("the quick brown fox jumps over the lazy dog")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got := c.Count("the quick brown fox jumps over the lazy dog"); got != want {
					t.Errorf("Count = %d, want %d", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
