package openai

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestTokenCount(t *testing.T) {
	tok, err := loadTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]int{
		"":                                 0,
		"Hello, world":                     3,
		" ":                                1,
		"你好":                               2,
		"\xff\xfe":                         1, // invalid UTF-8 counts as the U+FFFD it decodes to
		"<|endoftext|>":                    7, // special tokens are plain text in generated output
		"\x7f":                             1, // tiktoken-go drops DEL; tiktoken encodes it as one byte token
		"a\x7fb":                           3,
		"                                ": 1, // a run of 32 spaces is one token
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

// FuzzTokenCount checks what byte-level BPE (tiktoken) guarantees for any
// input: the count is deterministic; it is 0 exactly for the empty string,
// because every byte has a token and none is dropped; it is at most one
// token per byte; and, since no token is longer than the longest piece of
// the vocabulary (128 bytes in cl100k_base: runs of spaces), at least
// len/128. Runs of whitespace are single tokens ("32 spaces" is 1), so no
// bound per rune holds. Invalid UTF-8 is counted as the U+FFFD it decodes
// to, which keeps the bounds in bytes of the input.
func FuzzTokenCount(f *testing.F) {
	for _, s := range []string{"Hello, world", "你好", "\xff", " \n\t", "<|endoftext|>", "'s'll'd", "\x7f", "a\x7fb",
		strings.Repeat(" ", 32), strings.Repeat(" ", 300)} {
		f.Add(s)
	}
	tok, err := loadTokenizer("")
	if err != nil {
		f.Fatal(err)
	}
	longest := longestToken(tok)
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := tok.count(s)
		if !ok {
			t.Fatalf("count(%q) failed", s)
		}
		if again, _ := tok.count(s); again != n {
			t.Errorf("count(%q) = %d, then %d", s, n, again)
		}
		if (n == 0) != (s == "") {
			t.Errorf("count(%q) = %d", s, n)
		}
		if lo := (len(s) + longest - 1) / longest; n > len(s) || n < lo {
			t.Errorf("count(%q) = %d, want %d..%d for %d bytes", s, n, lo, len(s), len(s))
		}
	})
}

// longestToken returns the byte length of the vocabulary's longest token.
func longestToken(tok *tokenCounter) int {
	longest := 1
	for id := uint(0); id < 1<<17; id++ {
		longest = max(longest, len(tok.codec.Decode([]uint{id})))
	}
	return longest
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

// TestTokenizerFile: a tokenizer.json path counts with that file, one
// codec per path; a missing file is an error naming it.
func TestTokenizerFile(t *testing.T) {
	path, err := filepath.Abs("../tokenize/testdata/tiny-sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := loadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := tok.count("hello world"); !ok || n != 6 {
		t.Errorf("count = %d, %t; want 6 (the tokenizers library's)", n, ok)
	}
	again, _ := loadTokenizer(path)
	if again.codec != tok.codec {
		t.Error("two loads of one tokenizer.json built two codecs")
	}
	missing := filepath.Join(t.TempDir(), "tokenizer.json")
	if _, err := loadTokenizer(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v, want it to name %s", err, missing)
	}
}
