package tokenize

import (
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// TestVocabularyIsLibrarys: each embedded vocabulary is
// tiktoken-go/tokenizer's, id for id, and ends where the library's does;
// `go generate` rewrites them from the library when go.mod moves it.
func TestVocabularyIsLibrarys(t *testing.T) {
	for _, name := range names {
		v, err := loadVocabulary(name)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := tokenizer.Get(tokenizer.Encoding(name))
		if err != nil {
			t.Fatal(err)
		}
		tokens := 0
		for id, piece := range v.pieces {
			want, err := lib.Decode([]uint{uint(id)})
			if err != nil {
				want = ""
			}
			if piece != want {
				t.Fatalf("%s: id %d is %q, library %q", name, id, piece, want)
			}
			if piece != "" {
				tokens++
			}
		}
		for id := len(v.pieces); id < len(v.pieces)+1024; id++ {
			if s, err := lib.Decode([]uint{uint(id)}); err == nil {
				t.Fatalf("%s: id %d is %q in the library, past the embedded vocabulary", name, id, s)
			}
		}
		if len(v.ids) != tokens {
			t.Errorf("%s: %d ids for %d tokens: a token repeats", name, len(v.ids), tokens)
		}
	}
}

func TestParseVocabulary(t *testing.T) {
	v, err := parseVocabulary("\x01a\x00\x02bc")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(v.pieces), 3; got != want {
		t.Fatalf("%d pieces, want %d", got, want)
	}
	if v.ids["a"] != 0 || v.ids["bc"] != 2 || len(v.ids) != 2 {
		t.Errorf("ids = %v", v.ids)
	}
	if _, err := parseVocabulary("\x01a\x05bc"); err == nil {
		t.Error("a truncated vocabulary parsed")
	}
}

// BenchmarkFirstUse measures what the first Get of an encoding costs a
// process: decompressing and indexing its vocabulary, compiling its split.
func BenchmarkFirstUse(b *testing.B) {
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := newBPE(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
