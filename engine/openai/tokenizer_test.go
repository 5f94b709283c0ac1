package openai

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestTokenCount(t *testing.T) {
	tok, err := loadTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]int{
		"":              0,
		"Hello, world":  3,
		" ":             1,
		"你好":            2,
		"\xff\xfe":      1, // invalid UTF-8 counts as the U+FFFD it decodes to
		"<|endoftext|>": 7, // special tokens are plain text in generated output
	}
	for in, want := range tests {
		n, ok := tok.count(in)
		if !ok {
			t.Errorf("count(%q) failed", in)
		}
		if n != want {
			t.Errorf("count(%q) = %d, want %d", in, n, want)
		}
	}
	if _, ok := (*tokenCounter)(nil).count("x"); ok {
		t.Error("a nil counter counted")
	}
}

// TestTokenizerShared: clients share one codec per encoding, and counting
// from many goroutines gives the sequential counts (run with -race).
func TestTokenizerShared(t *testing.T) {
	a, errA := loadTokenizer("cl100k_base")
	b, errB := loadTokenizer("")
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if a.codec != b.codec {
		t.Error("two loads of cl100k_base built two codecs")
	}
	texts := []string{"Hello, world", strings.Repeat("什么是机器学习？", 20), "func main() {\n\tfmt.Println(1)\n}", "  spaced   out  "}
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i], _ = a.count(s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				j := (g + i) % len(texts)
				if n, _ := b.count(texts[j]); n != want[j] {
					t.Errorf("concurrent count of text %d = %d, want %d", j, n, want[j])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestTokenCountLongInputs: dirty-data sized inputs are counted in linear
// time, not quadratic (the bound is generous; quadratic would take minutes).
func TestTokenCountLongInputs(t *testing.T) {
	tok, _ := loadTokenizer("")
	for name, s := range map[string]string{
		"spaces":  strings.Repeat(" ", 100_000),
		"letters": strings.Repeat("a", 100_000),
		"digits":  strings.Repeat("7", 100_000),
		"mixed":   strings.Repeat("lorem ipsum, dolor 42! ", 5_000),
	} {
		if n, ok := tok.count(s); !ok || n <= 0 || n > len(s) {
			t.Errorf("%s: count = %d, %v", name, n, ok)
		}
	}
}

func FuzzTokenCount(f *testing.F) {
	for _, s := range []string{"Hello, world", "你好", "\xff", " \n\t", "<|endoftext|>", "'s'll'd"} {
		f.Add(s)
	}
	tok, err := loadTokenizer("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := tok.count(s)
		if !ok {
			t.Fatalf("count(%q) failed", s)
		}
		if n > len(s) || (s != "" && n == 0) {
			t.Errorf("count(%q) = %d for %d bytes", s, n, len(s))
		}
		if utf8.ValidString(s) && n < utf8.RuneCountInString(s)/16 {
			t.Errorf("count(%q) = %d, implausibly few", s, n)
		}
	})
}

// BenchmarkTokenizer measures the offline count; it reports ns per token,
// the cost each answer pays after its stream ended.
func BenchmarkTokenizer(b *testing.B) {
	tok, err := loadTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{
		"english": strings.Repeat("The quick brown fox jumps over the lazy dog, and then it rests. ", 30),
		"chinese": strings.Repeat("机器学习是人工智能的一个分支，它使计算机能够从数据中学习。", 30),
		"code":    strings.Repeat("for i := range n {\n\tif x[i] > 0 {\n\t\tsum += x[i]\n\t}\n}\n", 30),
	} {
		b.Run(name, func(b *testing.B) {
			tokens, _ := tok.count(text)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.count(text)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
		})
	}
}
