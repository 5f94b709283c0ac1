package dataset

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/tokenize"
)

func TestFilter(t *testing.T) {
	codec, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New([]Item{
		{Text: "hello"},               // 1 token
		{Text: "hello world"},         // 2
		{Text: "the quick brown fox"}, // 4
		{Messages: []engine.Message{{Role: "user", Content: "hello world"}, {Role: "user", Content: "hello"}}}, // 3
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		min, max int
		want     []int // indices into p
		wantErr  string
	}{
		{"no bounds", 0, 0, []int{0, 1, 2, 3}, ""},
		{"min", 3, 0, []int{2, 3}, ""},
		{"max", 0, 2, []int{0, 1}, ""},
		{"both", 2, 3, []int{1, 3}, ""},
		{"none left", 10, 20, nil, "no prompt has ≥ 10 and ≤ 20 tokens"},
		{"min above max", 5, 2, nil, "min 5 > max 2"},
		{"negative", -1, 0, nil, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := p.Filter(tt.min, tt.max, codec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []Item
			for _, i := range tt.want {
				want = append(want, p.Item(i))
			}
			got := make([]Item, f.Len())
			for i := range got {
				got[i] = f.Item(i)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Filter(%d, %d) = %+v, want %+v", tt.min, tt.max, got, want)
			}
		})
	}
	if _, err := p.Filter(1, 2, nil); err == nil {
		t.Error("Filter without a codec: no error")
	}
}

func TestFilterMemoised(t *testing.T) {
	cl, _ := tokenize.Get("cl100k_base")
	o2, _ := tokenize.Get("o200k_base")
	p, err := LoadText(context.Background(), "testdata/prompts.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Filter(1, 100, cl)
	b, _ := p.Filter(1, 100, cl)
	c, _ := p.Filter(1, 100, o2)
	if a != b {
		t.Error("the same filter gave two pools")
	}
	if a == c {
		t.Error("different tokenizers share a filtered pool")
	}
}
