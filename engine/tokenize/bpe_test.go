package tokenize

import (
	gobuild "go/build"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// libraryCorpus is text of every kind a count meets: prose in several
// scripts, CJK, emoji sequences, code, runs of whitespace, DEL and other
// control bytes, invalid UTF-8, special tokens' text, and pieces long
// enough to take the merge's long paths.
var libraryCorpus = []string{
	"hello world", "Hello, world", " ", "", "  leading and trailing  ",
	benchText,
	"什么是机器学习？1+1等于几？今天天气怎么样？",
	strings.Repeat("机器学习是人工智能的一个分支，它使计算机能够从数据中学习。", 12),
	"日本語のテキスト、カタカナとひらがな。한국어 텍스트도 있습니다.",
	"Ünïcödé façade naïve café Straße ΑΘΗΝΑ Москва مرحبا بالعالم नमस्ते दुनिया สวัสดีชาวโลก",
	"e\u0301 combining a\u0308\u0301 marks \u200b zero\u200dwidth \ufeff bom",
	"👋🏽 👨‍👩‍👧‍👦 🇯🇵🇫🇷 ❤️‍🔥 🏳️‍🌈 " + strings.Repeat("😀", 200),
	"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
	"for i := range n {\n\tif x[i] > 0 {\n\t\tsum += x[i] // 12345678\n\t}\n}\n",
	"def f(x):\r\n    return x ** 2  # ok\r\n\r\n\r\n",
	"SELECT * FROM t WHERE a='b' AND c<>3;\n<div class=\"x\">&amp;</div>",
	"I'm, you're, he'll, they've, we'd, it's, I'M, YOU'RE, THEY'LL, She'S",
	"1234567890 3.14159 -42 1e10 0x1F 1,000,000 2026-12-02T00:53:00Z",
	"\t\t\t\n\n\n   \n \r\n\r\n\u00a0\u3000 \v\f",
	strings.Repeat(" ", 1000) + "x" + strings.Repeat("\n", 300) + strings.Repeat("\t ", 200),
	"\x7f", "a\x7fb", "\x7f\x7f\x7f", "!\x7f!", " \x7fhello", "x \x7f\n\x7f ", "日本\x7f語", "12\x7f34",
	"\x00\x01\x02\x1b[31mred\x1b[0m\x08",
	"\xff\xfe", "invalid \xff utf8", "\xc3\x28 \xe2\x82 \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf", string([]byte{0x80, 0x81, 'a', 0xbf}),
	"<|endoftext|>", "<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>", "<|endofprompt|><|im_start|>",
	strings.Repeat("!", 3000), strings.Repeat("a", 5000), strings.Repeat("ab", 2000), strings.Repeat("-=", 700),
	strings.Repeat("hahaha", 800), strings.Repeat("\u200b", 1500),
}

// TestSameAsLibrary holds every encoding's counts, ids and decoded text to
// tiktoken-go/tokenizer's, whose vocabularies and merge the codec replaces;
// the count is the library's plus one per DEL, as llmload always counted.
func TestSameAsLibrary(t *testing.T) {
	corpus := append(slices.Clone(libraryCorpus), randomTexts(150)...)
	for _, name := range names {
		lib, err := tokenizer.Get(tokenizer.Encoding(name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range corpus {
			compareWithLibrary(t, name, lib, c, s)
		}
	}
}

func compareWithLibrary(t *testing.T, name string, lib tokenizer.Codec, c Codec, s string) {
	t.Helper()
	want, _, err := lib.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Encode(s)
	if !slices.Equal(got, want) {
		t.Errorf("%s: Encode(%.40q) = %d ids, library %d; first difference at %d",
			name, s, len(got), len(want), firstDifference(got, want))
	}
	if got, want := c.Count(s), len(want)+strings.Count(s, "\x7f"); got != want {
		t.Errorf("%s: Count(%.40q) = %d, want %d", name, s, got, want)
	}
	wantText, _ := lib.Decode(want)
	if got := c.Decode(want); got != wantText {
		t.Errorf("%s: Decode(Encode(%.40q)) = %.40q, library %.40q", name, s, got, wantText)
	}
}

func firstDifference(a, b []uint) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// randomTexts are reproducible strings of runes drawn from ASCII, Latin,
// CJK, emoji, whitespace and control ranges, with a stray byte now and
// then.
func randomTexts(n int) []string {
	rng := rand.New(rand.NewPCG(24, 1))
	ranges := [][2]rune{{0x00, 0x7f}, {0x20, 0x7e}, {0x20, 0x7e}, {0xa0, 0x24f}, {0x370, 0x4ff},
		{0x4e00, 0x9fff}, {0x3040, 0x30ff}, {0x1f300, 0x1faff}, {0x2000, 0x206f}, {'\t', '\r'}}
	texts := make([]string, n)
	for i := range texts {
		var b []byte
		for range 1 + rng.IntN(200) {
			if rng.IntN(50) == 0 {
				b = append(b, byte(0x80+rng.IntN(0x80)))
				continue
			}
			r := ranges[rng.IntN(len(ranges))]
			b = utf8.AppendRune(b, r[0]+rune(rng.IntN(int(r[1]-r[0]+1))))
		}
		texts[i] = string(b)
	}
	return texts
}

// TestSplitIsGenerated: the split regexes compile to the code
// tiktoken-go/tokenizer registered for them, not to regexp2's
// interpreter, which would match DEL and, slower, give other ids for it;
// a pattern spelt differently from the library's gets the interpreter.
// This test binary links the library for the comparisons anyway; the
// package must import it for llmload's binary to.
func TestSplitIsGenerated(t *testing.T) {
	const lib = "github.com/tiktoken-go/tokenizer/codec"
	if p, err := gobuild.ImportDir(".", 0); err != nil || !slices.Contains(p.Imports, lib) {
		t.Errorf("the package does not import %s (%v)", lib, err)
	}
	for _, name := range names {
		c, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := c.(*bpe).split.FindStringMatch("\x7f"); m != nil {
			t.Errorf("%s: the split matched DEL: the library's generated regex is not in use", name)
		}
	}
}

// TestMergeIsNotQuadratic: a 200 kB piece, which a merge that rescans the
// pairs takes minutes over, counts in well under the bound.
func TestMergeIsNotQuadratic(t *testing.T) {
	c, _ := Get("cl100k_base")
	start := time.Now()
	c.Count(strings.Repeat("a", 200_000))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("counting a 200 kB piece took %v", d)
	}
}

func FuzzSameAsLibrary(f *testing.F) {
	for _, s := range libraryCorpus {
		f.Add(s)
	}
	libs := map[string]tokenizer.Codec{}
	for _, name := range names {
		libs[name], _ = tokenizer.Get(tokenizer.Encoding(name))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range names {
			c, _ := Get(name)
			compareWithLibrary(t, name, libs[name], c, s)
		}
	})
}
