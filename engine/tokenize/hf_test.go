package tokenize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// reference holds the ids the tokenizers library itself gives each text
// (testdata/reference.json says how they were made).
type reference struct {
	Generator string              `json:"generator"`
	Texts     []string            `json:"texts"`
	IDs       map[string][][]uint `json:"ids"`
}

func loadReference(t testing.TB) reference {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// tokenizerPath is a vendored tokenizer's path, or a fetched real one's.
func tokenizerPath(t testing.TB, name string) string {
	if strings.HasPrefix(name, "tiny-") {
		p, err := filepath.Abs(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return realTokenizer(t, name)
}

// TestFileMatchesReference: for every text of the reference, Encode gives
// the tokenizers library's ids exactly and Count their number: byte-level
// BPE (tiny, Llama 3, Qwen3) and SentencePiece-style BPE (tiny, Mistral).
func TestFileMatchesReference(t *testing.T) {
	ref := loadReference(t)
	for _, name := range []string{"tiny-bytelevel", "tiny-sentencepiece", "llama3", "qwen3", "mistral"} {
		t.Run(name, func(t *testing.T) {
			c, err := Get(tokenizerPath(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range ref.Texts {
				want := ref.IDs[name][i]
				if got := c.Encode(text); !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Errorf("Encode(%.40q) = %d ids, want %d:\n got %v\nwant %v", text, len(got), len(want), head(got), head(want))
				}
				if got := c.Count(text); got != len(want) {
					t.Errorf("Count(%.40q) = %d, want %d", text, got, len(want))
				}
			}
		})
	}
}

func head(ids []uint) []uint { return ids[:min(len(ids), 24)] }

// TestFilePublishedIDs checks ids published beside the tokenizers
// themselves: Meta's Llama 3 tokenizer test, and the Go bindings' test of
// the tokenizers library.
func TestFilePublishedIDs(t *testing.T) {
	c, err := Get(realTokenizer(t, "llama3"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []uint
	}{
		{"This is a test sentence.", []uint{2028, 374, 264, 1296, 11914, 13}},                     // meta-llama/llama3 test_tokenizer.py
		{"brown fox jumps over the lazy dog", []uint{65561, 39935, 35308, 927, 279, 16053, 5679}}, // daulet/tokenizers tokenizer_test.go
		{"<|begin_of_text|>Hi<|eot_id|>", []uint{128000, 13347, 128009}},
	}
	for _, tt := range tests {
		if got := c.Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestFileRoundTrip: Decode undoes Encode, the SentencePiece space
// included, and skips ids it does not know. (Text opening with an added
// token keeps the space SentencePiece puts after it, as the tokenizers
// library's decoder does.)
func TestFileRoundTrip(t *testing.T) {
	texts := []string{"hello world", " the in world", "什么是机器学习？", "a\nb\tc  d", "emoji 😀 ok", "hi</s>", "x<|endoftext|>x"}
	for _, name := range []string{"tiny-bytelevel", "tiny-sentencepiece", "llama3", "qwen3", "mistral"} {
		t.Run(name, func(t *testing.T) {
			c, err := Get(tokenizerPath(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range texts {
				ids := c.Encode(s)
				if got := c.Decode(ids); got != s {
					t.Errorf("Decode(Encode(%q)) = %q", s, got)
				}
				if got := c.Decode(append([]uint{1 << 30}, ids...)); got != s {
					t.Errorf("Decode with an unknown id = %q, want %q", got, s)
				}
			}
		})
	}
}

// TestFileErrors: a file llmload cannot count with is refused at load,
// with an error naming the file and what is wrong, never a panic.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mkdir := func(p string) string {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tiny, err := os.ReadFile("testdata/tiny-bytelevel.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(name string, f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(tiny, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return write(name, string(b))
	}
	model := func(m map[string]any) map[string]any { return m["model"].(map[string]any) }
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope", "tokenizer.json"), "no such file or directory"},
		{"directory", mkdir(filepath.Join(dir, "sub.json")), "is a directory"},
		{"empty", write("empty.json", ""), "not a tokenizer.json"},
		{"malformed", write("bad.json", "{\n \"model\": {\n  \"type\": \"BPE\",,\n}"), "line 3"},
		{"not an object", write("list.json", "[1, 2]"), "not a tokenizer.json"},
		{"no model", write("nomodel.json", `{"version": "1.0"}`), "no BPE model"},
		{"wordpiece", write("wp.json", `{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`), `model type "WordPiece" is not supported`},
		{"unigram", write("uni.json", `{"model": {"type": "Unigram", "vocab": [["a", -1]]}}`), `model type "Unigram" is not supported`},
		{"vocab a list", write("vl.json", `{"model": {"type": "BPE", "vocab": [1], "merges": []}}`), "model.vocab"},
		{"dropout", edit("dropout.json", func(m map[string]any) { model(m)["dropout"] = 0.1 }), "dropout"},
		{"lowercase", edit("lower.json", func(m map[string]any) { m["normalizer"] = map[string]any{"type": "Lowercase"} }), `normalizer "Lowercase" is not supported`},
		{"no pre-tokenizer", edit("nopre.json", func(m map[string]any) { m["pre_tokenizer"] = nil }), "no pre-tokenizer"},
		{"two splits", edit("splits.json", func(m map[string]any) {
			split := map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `\p{N}{1,3}`}, "behavior": "Isolated", "invert": false}
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split, split, m["pre_tokenizer"]}}
		}), "pre-tokenizer [Split, Split, ByteLevel] is not supported"},
		{"bad regex", edit("regex.json", func(m map[string]any) {
			split := map[string]any{"type": "Split", "pattern": map[string]any{"Regex": `(unclosed`}, "behavior": "Isolated", "invert": false}
			bl := m["pre_tokenizer"].(map[string]any)
			bl["use_regex"] = false
			m["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{split, bl}}
		}), "pre-tokenizer regex"},
		{"merges out of order", edit("order.json", func(m map[string]any) {
			ms := model(m)["merges"].([]any)
			ms[0], ms[1] = ms[1], ms[0]
		}), "not in the order of the ids"},
		{"not byte-level", edit("alpha.json", func(m map[string]any) { model(m)["vocab"].(map[string]any)[" "] = 999 }), "byte-level alphabet"},
		{"bad merge", edit("merge.json", func(m map[string]any) { model(m)["merges"] = []any{42} }), "model.merges[0]"},
		{"huge added id", edit("added.json", func(m map[string]any) {
			m["added_tokens"] = []any{map[string]any{"id": 1e12, "content": "<x>"}}
		}), "added_tokens[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Get(tt.path)
			if err == nil {
				t.Fatalf("Get(%s) = %s, want an error", tt.path, c.Name())
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want the path and %q", err, tt.want)
			}
			if _, again := Get(tt.path); again == nil || again.Error() != err.Error() {
				t.Errorf("second Get: %v, want the same error", again)
			}
		})
	}
}

// TestFileRefusesWordPiece: a real WordPiece tokenizer.json (BERT) is
// refused with the families llmload reads.
func TestFileRefusesWordPiece(t *testing.T) {
	_, err := Get(realTokenizer(t, "bert"))
	if err == nil || !strings.Contains(err.Error(), `model type "WordPiece" is not supported`) || !strings.Contains(err.Error(), "Llama 3") {
		t.Errorf("err = %v", err)
	}
}

func TestIsFile(t *testing.T) {
	for name, want := range map[string]bool{
		"cl100k_base": false, "": false, "none": false, "tokenizer.json": true, "/models/qwen/TOKENIZER.JSON": true, "data/tok.json": true,
	} {
		if got := IsFile(name); got != want {
			t.Errorf("IsFile(%q) = %t", name, got)
		}
	}
}

// TestFileLongInputs: dirty-data sized inputs count in linear time, not
// quadratic; a piece longer than maxPiece is merged in slices.
func TestFileLongInputs(t *testing.T) {
	for _, name := range []string{"tiny-bytelevel", "tiny-sentencepiece"} {
		c, err := Get(tokenizerPath(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for kind, s := range map[string]string{
			"spaces":  strings.Repeat(" ", 100_000),
			"letters": strings.Repeat("a", 100_000),
			"digits":  strings.Repeat("7", 100_000),
			"mixed":   strings.Repeat("lorem ipsum, dolor 42! ", 5_000),
			"invalid": strings.Repeat("\xff", 10_000),
		} {
			start := time.Now()
			n := c.Count(s)
			if n <= 0 || n > 3*len(s) {
				t.Errorf("%s %s: Count = %d", name, kind, n)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("%s %s: %v to count %d bytes", name, kind, d, len(s))
			}
		}
	}
}

// TestFileConcurrent: one codec counts from many goroutines as it does
// from one (run with -race).
func TestFileConcurrent(t *testing.T) {
	for _, name := range []string{"tiny-bytelevel", "tiny-sentencepiece"} {
		c, err := Get(tokenizerPath(t, name))
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{"hello world", strings.Repeat("the in world ", 50), "<|endoftext|><s>"}
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = c.Count(s)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 40 {
					if j := (g + i) % len(texts); c.Count(texts[j]) != want[j] {
						t.Errorf("%s: concurrent count of text %d differs", name, j)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestGetFileShared: one path is one codec for the whole process.
func TestGetFileShared(t *testing.T) {
	p := tokenizerPath(t, "tiny-sentencepiece")
	a, errA := Get(p)
	b, errB := Get(p)
	if errA != nil || errB != nil || a != b {
		t.Fatalf("Get twice: %v %v, same codec %t", errA, errB, a == b)
	}
	if a.Name() != p {
		t.Errorf("Name() = %q, want %q", a.Name(), p)
	}
}

// benchText is about 4 kB of English prose and code, the size of a
// medium prompt.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog; it's 12:45 and they'll've left. "+
	"func main() {\n\tfmt.Println(\"hello, world\")\n}\n", 33)

// BenchmarkCount measures counting a medium prompt with each backing.
func BenchmarkCount(b *testing.B) {
	for _, name := range []string{"cl100k_base", "llama3", "qwen3", "mistral"} {
		b.Run(name, func(b *testing.B) {
			path := name
			if !known(name) {
				path = realTokenizer(b, name)
			}
			c, err := Get(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(benchText)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = c.Count(benchText)
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}
