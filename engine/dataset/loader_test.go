package dataset

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/engine"
)

type loaderFunc func(path string, o Options) (*Pool, error)

// loaders call each format's loader without a deadline.
var loaders = map[string]loaderFunc{
	"text": func(p string, _ Options) (*Pool, error) { return LoadText(context.Background(), p) },
	"jsonl": func(p string, o Options) (*Pool, error) {
		return LoadJSONL(context.Background(), p, o)
	},
	"sharegpt": func(p string, o Options) (*Pool, error) {
		return LoadShareGPT(context.Background(), p, o)
	},
	"csv": func(p string, o Options) (*Pool, error) { return LoadCSV(context.Background(), p, o) },
}

func texts(p *Pool) []string {
	out := make([]string, p.Len())
	for i := range out {
		out[i] = p.Item(i).Text
	}
	return out
}

func TestLoadGood(t *testing.T) {
	tests := []struct {
		name, loader, path string
		opts               Options
		want               []string
	}{
		{"text", "text", "testdata/prompts.txt", Options{},
			[]string{"What is machine learning?", "什么是机器学习？", "Write a haiku about load tests."}},
		{"jsonl", "jsonl", "testdata/prompts.jsonl", Options{},
			[]string{"What is 1+1?", "Explain TCP slow start.", "Name three prime numbers."}},
		{"jsonl gz", "jsonl", "testdata/prompts.jsonl.gz", Options{}, []string{"gzipped one", "gzipped two"}},
		{"gzip by magic", "jsonl", "testdata/gzipped_no_ext.jsonl", Options{}, []string{"gzipped one", "gzipped two"}},
		{"sharegpt first turn", "sharegpt", "testdata/sharegpt.json", Options{},
			[]string{"What is a KV cache?", "Define latency."}},
		{"sharegpt stream", "sharegpt", "testdata/sharegpt_not_array.json", Options{Conversations: false, Field: "x"}, nil},
		{"csv", "csv", "testdata/prompts.csv", Options{},
			[]string{"Summarise this, please.", "A prompt\nover two lines", `Say "hi"`}},
		{"csv other column", "csv", "testdata/prompts.csv", Options{Column: "category"},
			[]string{"short", "long", "empty", "short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loaders[tt.loader](tt.path, tt.opts)
			if tt.want == nil { // the stream ends in a bad record
				if err == nil || !strings.Contains(err.Error(), "sharegpt_not_array.json:3: record 3") {
					t.Fatalf("err = %v, want record 3 at line 3", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("prompts = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadConversations(t *testing.T) {
	tests := []struct {
		name, loader, path string
		opts               Options
		want               [][]engine.Message
	}{
		{"jsonl messages", "jsonl", "testdata/conversations.jsonl", Options{Field: "messages"}, [][]engine.Message{
			{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}},
			{{Role: "user", Content: "What is Go?"}, {Role: "assistant", Content: "A language."}, {Role: "user", Content: "Who made it?"}},
		}},
		{"sharegpt", "sharegpt", "testdata/sharegpt.json", Options{Conversations: true}, [][]engine.Message{
			{{Role: "user", Content: "What is a KV cache?"}, {Role: "assistant", Content: "It stores keys and values."},
				{Role: "user", Content: "Why does it help?"}},
			{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Define latency."}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loaders[tt.loader](tt.path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Len(), len(tt.want); got != want {
				t.Fatalf("Len() = %d, want %d", got, want)
			}
			for i, want := range tt.want {
				if got := p.Item(i); got.Text != "" || !reflect.DeepEqual(got.Messages, want) {
					t.Errorf("item %d = %+v, want %+v", i, got, want)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, loader, path string
		opts               Options
		want               []string // substrings of the error
	}{
		{"missing file", "text", "testdata/nope.txt", Options{}, []string{"testdata/nope.txt: no such file"}},
		{"directory", "jsonl", "testdata", Options{}, []string{"testdata:"}},
		{"no prompts", "text", "testdata/blank.txt", Options{}, []string{"testdata/blank.txt: no prompts"}},
		{"invalid json", "jsonl", "testdata/bad_json.jsonl", Options{}, []string{"testdata/bad_json.jsonl:3: invalid JSON"}},
		{"missing field", "jsonl", "testdata/missing_field.jsonl", Options{}, []string{"missing_field.jsonl:2:", `no field "prompt"`, "id, text"}},
		{"wrong type", "jsonl", "testdata/wrong_type.jsonl", Options{}, []string{"wrong_type.jsonl:3:", `field "prompt" is a number`}},
		{"bad messages", "jsonl", "testdata/bad_messages.jsonl", Options{Field: "messages"}, []string{"bad_messages.jsonl:2:", "message 1", `"content" is an array`}},
		{"not object", "jsonl", "testdata/not_object.jsonl", Options{}, []string{"not_object.jsonl:1: not a JSON object"}},
		{"corrupt gzip", "jsonl", "testdata/corrupt.jsonl.gz", Options{}, []string{"corrupt.jsonl.gz: gzip:"}},
		{"sharegpt shape", "sharegpt", "testdata/sharegpt_bad_shape.json", Options{}, []string{"sharegpt_bad_shape.json:3: record 2", "conversation is a string"}},
		{"sharegpt speaker", "sharegpt", "testdata/sharegpt_speaker.json", Options{}, []string{"sharegpt_speaker.json:2: record 1", "turn 2", `unknown speaker "robot"`}},
		{"sharegpt truncated", "sharegpt", "testdata/sharegpt_truncated.json", Options{}, []string{"sharegpt_truncated.json:", "invalid JSON"}},
		{"sharegpt of prompts", "sharegpt", "testdata/prompts.jsonl", Options{}, []string{"prompts.jsonl:1: record 1", `no "conversations" or "messages"`}},
		{"csv no column", "csv", "testdata/no_column.csv", Options{}, []string{"no_column.csv:", `no column "prompt"`, "columns: id, text"}},
		{"csv short row", "csv", "testdata/short_row.csv", Options{}, []string{"short_row.csv:3:", "row has 1 fields"}},
		{"csv bad quote", "csv", "testdata/bad_quote.csv", Options{}, []string{"bad_quote.csv:2:"}},
		{"csv empty", "csv", "testdata/empty.csv", Options{}, []string{"empty.csv: no prompts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loaders[tt.loader](tt.path, tt.opts)
			if err == nil {
				t.Fatalf("loaded %d items, want an error", p.Len())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadCachesPool(t *testing.T) {
	var wg sync.WaitGroup
	pools := make([]*Pool, 8)
	for i := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pools[i], _ = LoadJSONL(context.Background(), "testdata/prompts.jsonl", Options{})
		}()
	}
	wg.Wait()
	again, err := LoadJSONL(context.Background(), "./testdata/../testdata/prompts.jsonl", Options{Field: "prompt"})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pools {
		if p != again {
			t.Errorf("load %d returned another pool", i)
		}
	}
	other, _ := LoadCSV(context.Background(), "testdata/prompts.csv", Options{Column: "category"})
	if def, _ := LoadCSV(context.Background(), "testdata/prompts.csv", Options{}); def == other {
		t.Error("different columns share a pool")
	}
}

func TestNew(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil): no error")
	}
	if _, err := New([]Item{{Text: "a"}, {}}); err == nil || !strings.Contains(err.Error(), "item 2") {
		t.Errorf("New with an empty item: err = %v", err)
	}
	items := []Item{{Text: "a"}, {Text: "b"}, {Text: "c"}}
	p, err := New(items)
	if err != nil {
		t.Fatal(err)
	}
	items[0].Text = "changed"
	tests := []struct {
		i    int
		want string
	}{{0, "a"}, {2, "c"}, {3, "a"}, {7, "b"}, {-1, "c"}, {-4, "c"}}
	for _, tt := range tests {
		if got := p.Item(tt.i).Text; got != tt.want {
			t.Errorf("Item(%d) = %q, want %q", tt.i, got, tt.want)
		}
	}
}
