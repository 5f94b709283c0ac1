package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/tokenize"
)

func newPrompter(t testing.TB, tokenizer string, block int, salt uint64) *TracePrompter {
	t.Helper()
	p, err := NewTracePrompter(tokenizer, block, salt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func seq(from, n int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = from + int64(i)
	}
	return ids
}

// promptLengths are the lengths every tokenizer must hit exactly: one
// token, around a 16-token block, around a 512-token block, and long.
var promptLengths = []int{1, 15, 16, 17, 512, 513, 5000}

// checkExact prompts records of every length with no ids, too few, just
// enough and too many, and recounts each prompt with the tokenizer.
func checkExact(t *testing.T, tokenizer string, block int) {
	p := newPrompter(t, tokenizer, block, 7)
	codec, _ := tokenize.Get(tokenizer)
	for i, n := range promptLengths {
		need := int64((n + block - 1) / block)
		for j, ids := range [][]int64{nil, seq(0, max(need/2, 1)), seq(100, need), seq(1000, need+3)} {
			rec := &TraceRecord{Input: n, HashIDs: ids}
			index := 10*i + j
			text, tokens := p.Prompt(rec, index)
			if tokens != n {
				t.Errorf("%s: input %d, %d ids: Prompt says %d tokens", tokenizer, n, len(ids), tokens)
			}
			if got := codec.Count(text); got != n {
				t.Errorf("%s: input %d, %d ids: the prompt has %d tokens: %.80q", tokenizer, n, len(ids), got, text)
			}
			if got := p.Check(rec, index); got != n {
				t.Errorf("%s: Check = %d, want %d", tokenizer, got, n)
			}
			if strings.HasPrefix(text, " ") {
				t.Errorf("%s: the prompt starts with a space", tokenizer)
			}
		}
	}
}

func TestTracePromptExact(t *testing.T) {
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		for _, block := range []int{16, 512} {
			t.Run(fmt.Sprintf("%s/%d", enc, block), func(t *testing.T) { checkExact(t, enc, block) })
		}
	}
}

// Real models' tokenizer.json files, which engine/tokenize's tests fetch
// into the cache (byte-level Llama 3 and Qwen 3, SentencePiece Mistral);
// each skips when its file is not there.
func TestTracePromptExactRealTokenizers(t *testing.T) {
	cache, err := os.UserCacheDir()
	if dir := os.Getenv("LLMLOAD_CACHE"); dir != "" {
		cache, err = dir, nil
	} else {
		cache = filepath.Join(cache, "llmload")
	}
	for _, name := range []string{"llama3", "qwen3", "mistral"} {
		t.Run(name, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(cache, "tokenizers", name+"-*.json"))
			if err != nil || len(files) == 0 {
				t.Skipf("no %s tokenizer.json in the cache: go test ./engine/tokenize/ fetches it", name)
			}
			checkExact(t, files[0], 16)
		})
	}
}

// The tokenizer.json files of engine/tokenize's tests are too small to
// offer the words exact lengths need, and reference.json is no tokenizer:
// each is refused with a reason.
func TestNewTracePrompterErrors(t *testing.T) {
	tests := []struct {
		tokenizer string
		block     int
		want      string
	}{
		{"../tokenize/testdata/tiny-bytelevel.json", 16, "single-token words, want 100: prompts of exact lengths cannot be built"},
		{"../tokenize/testdata/tiny-sentencepiece.json", 16, "single-token words, want 100: prompts of exact lengths cannot be built"},
		{"../tokenize/testdata/reference.json", 16, "trace prompts: tokenize: ../tokenize/testdata/reference.json: no BPE model"},
		{"llama", 16, `trace prompts: tokenize: unknown tokenizer "llama"`},
		{"cl100k_base", 0, "trace prompts: block_tokens 0 out of range"},
	}
	for _, tt := range tests {
		if _, err := NewTracePrompter(tt.tokenizer, tt.block, 1); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.tokenizer, err, tt.want)
		}
	}
}

// Records whose ids start alike have prompts that are byte-identical to
// the end of the shared blocks (so token-identical), and differ from the
// first different id on.
func TestTracePromptSharedPrefix(t *testing.T) {
	const block = 16
	p := newPrompter(t, "cl100k_base", block, 42)
	codec, _ := tokenize.Get("cl100k_base")
	shared, _ := p.Prompt(&TraceRecord{Input: 3 * block, HashIDs: []int64{5, 9, 2}}, 0)
	sharedTokens := codec.Encode(shared)
	firstWordDiffers := 0
	for other := int64(100); other < 200; other++ {
		a, _ := p.Prompt(&TraceRecord{Input: 5*block - 3, HashIDs: []int64{5, 9, 2, 7, 1}}, 1)
		b, _ := p.Prompt(&TraceRecord{Input: 4*block + 2, HashIDs: []int64{5, 9, 2, other, 1}}, 2)
		if !strings.HasPrefix(a, shared+" ") || !strings.HasPrefix(b, shared+" ") {
			t.Fatalf("the three shared blocks are not a common prefix:\n%.200q\n%.200q", a, b)
		}
		if got := codec.Encode(b)[:3*block]; !reflect.DeepEqual(got, sharedTokens) {
			t.Fatal("the shared blocks' tokens differ")
		}
		// The fourth blocks differ: the common prefix ends inside them.
		restA, restB := a[len(shared):], b[len(shared):]
		if common := commonPrefix(restA, restB); common >= len(blockText(p, other)) {
			t.Errorf("ids 7 and %d gave the same block", other)
		}
		if strings.Fields(restA)[0] != strings.Fields(restB)[0] {
			firstWordDiffers++
		}
	}
	// Words are drawn from a few hundred: now and then two blocks open
	// with one word, never more than that.
	if firstWordDiffers < 95 {
		t.Errorf("the first word of the differing block differs in %d of 100 pairs", firstWordDiffers)
	}
}

// blockText is the whole text of one block opening a prompt.
func blockText(p *TracePrompter, id int64) string {
	text, _ := p.Prompt(&TraceRecord{Input: p.block, HashIDs: []int64{id}}, 0)
	return text
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestTracePromptBlocks(t *testing.T) {
	p := newPrompter(t, "o200k_base", 16, 3)
	prompt := func(n int, ids []int64, index int) string {
		text, _ := p.Prompt(&TraceRecord{Input: n, HashIDs: ids}, index)
		return text
	}
	t.Run("a block is the same text wherever it is", func(t *testing.T) {
		if alone, second := prompt(16, []int64{7}, 0), prompt(32, []int64{5, 7}, 1); !strings.HasSuffix(second, " "+alone) {
			t.Errorf("block 7 alone %.60q is not the end of %.120q", alone, second)
		}
	})
	t.Run("a partial last block is a prefix of the block", func(t *testing.T) {
		if part, whole := prompt(20, []int64{1, 2}, 0), prompt(32, []int64{1, 2}, 0); !strings.HasPrefix(whole, part+" ") {
			t.Errorf("%q is not a prefix of %q", part, whole)
		}
	})
	t.Run("ids beyond the input are ignored", func(t *testing.T) {
		if a, b := prompt(20, []int64{1, 2, 3, 4}, 0), prompt(20, []int64{1, 2}, 0); a != b {
			t.Errorf("%q != %q", a, b)
		}
	})
	t.Run("past the blocks, words of the record's own", func(t *testing.T) {
		a, b := prompt(40, []int64{1}, 3), prompt(40, []int64{1}, 4)
		head := prompt(16, []int64{1}, 0)
		if !strings.HasPrefix(a, head+" ") || !strings.HasPrefix(b, head+" ") {
			t.Fatal("block 1 does not open both prompts")
		}
		if wa, wb := strings.Fields(a)[16:], strings.Fields(b)[16:]; reflect.DeepEqual(wa[:2], wb[:2]) {
			t.Errorf("records 3 and 4 share their own words %q", wa[:2])
		}
		if again := prompt(40, []int64{1}, 3); again != a {
			t.Error("one record gave two prompts")
		}
	})
	t.Run("records without ids share no prefix", func(t *testing.T) {
		firsts := map[string]int{}
		for i := range 50 {
			w := strings.Fields(prompt(10, nil, i))
			firsts[w[0]+" "+w[1]]++
		}
		if len(firsts) != 50 {
			t.Errorf("50 records without ids open with only %d distinct pairs of words", len(firsts))
		}
	})
	t.Run("the salt changes the text, not the lengths", func(t *testing.T) {
		other := newPrompter(t, "o200k_base", 16, 4)
		rec := &TraceRecord{Input: 100, HashIDs: []int64{1, 2, 3}}
		a, na := p.Prompt(rec, 0)
		b, nb := other.Prompt(rec, 0)
		if a == b || commonPrefix(a, b) > 20 || na != nb || other.Check(rec, 0) != 100 {
			t.Errorf("salt 3: %.60q (%d), salt 4: %.60q (%d)", a, na, b, nb)
		}
		if c, _ := newPrompter(t, "o200k_base", 16, 3).Prompt(rec, 0); c != a {
			t.Error("the same salt gave another text")
		}
	})
	t.Run("a prompt cut at the token limit", func(t *testing.T) {
		if _, n := p.Prompt(&TraceRecord{Input: MaxSyntheticTokens + 5}, 0); n != MaxSyntheticTokens {
			t.Errorf("tokens = %d, want %d", n, MaxSyntheticTokens)
		}
	})
}

func TestTracePromptRecorded(t *testing.T) {
	p := newPrompter(t, "cl100k_base", 16, 1)
	text, n := p.Prompt(&TraceRecord{Input: 99, HashIDs: []int64{1}, Text: "Hello, world!"}, 0)
	if text != "Hello, world!" || n != 4 {
		t.Errorf("a recorded text: %q, %d tokens; want it as written, 4 tokens", text, n)
	}
	msgs := []engine.Message{{Role: "user", Content: "hi"}}
	if text, n := p.Prompt(&TraceRecord{Input: 5, Messages: msgs}, 0); text != "" || n != 0 {
		t.Errorf("recorded messages: %q, %d; want no text", text, n)
	}
	if text, n := p.Prompt(&TraceRecord{}, 0); text != "" || n != 0 {
		t.Errorf("no length: %q, %d", text, n)
	}
}

// The prompt is one allocation: its own bytes.
func TestTracePromptAllocs(t *testing.T) {
	p := newPrompter(t, "cl100k_base", 512, 1)
	rec := &TraceRecord{Input: 10000, HashIDs: seq(0, 20)}
	if n := testing.AllocsPerRun(20, func() { p.Prompt(rec, 1) }); n != 1 {
		t.Errorf("%.0f allocations a prompt, want 1", n)
	}
}

// The prompts of the fixture trace, every one recounted.
func TestTracePromptFixture(t *testing.T) {
	tr, err := LoadTrace("testdata/trace_mooncake.jsonl", TraceFormat{Kind: TraceMooncake, BlockTokens: fixtureBlock})
	if err != nil {
		t.Fatal(err)
	}
	p := newPrompter(t, "cl100k_base", tr.Format.BlockTokens, 0)
	for i := range tr.Records {
		if got, want := p.Check(&tr.Records[i], i), tr.Records[i].Input; got != want {
			t.Errorf("record %d (line %d): %d tokens, want %d", i, tr.Records[i].Line, got, want)
		}
	}
}

// BenchmarkTracePrompt builds a 10,000-token prompt from 20 blocks of 512.
func BenchmarkTracePrompt(b *testing.B) {
	p := newPrompter(b, "cl100k_base", 512, 1)
	rec := &TraceRecord{Input: 10000, HashIDs: seq(0, 20)}
	b.ReportAllocs()
	for b.Loop() {
		p.Prompt(rec, 1)
	}
}
