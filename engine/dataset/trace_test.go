package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

var (
	mooncake = TraceFormat{Kind: TraceMooncake}
	azure    = TraceFormat{Kind: TraceAzure}
)

// loadTraceText writes content to a file named name and loads it without
// the process-wide cache, so each case reads its own file.
func loadTraceText(t *testing.T, name, content string, f TraceFormat) (*Trace, string, error) {
	t.Helper()
	path := writeFile(t, name, []byte(content))
	nf, err := f.normalized()
	if err != nil {
		return nil, path, err
	}
	tr, err := loadTrace(t.Context(), path, nf)
	return tr, path, err
}

// brief is what a test compares of a record.
type brief struct {
	At       time.Duration
	In, Out  int
	IDs      []int64
	Session  string
	Text     string
	Messages []engine.Message
	Line     int
}

func briefs(tr *Trace) []brief {
	out := make([]brief, len(tr.Records))
	for i, r := range tr.Records {
		out[i] = brief{r.At, r.Input, r.Output, r.HashIDs, r.Session, r.Text, r.Messages, r.Line}
	}
	return out
}

func TestLoadTraceFormats(t *testing.T) {
	ms := time.Millisecond
	long := strings.Repeat("lorem ipsum ", 20000) // 240 KB: beyond any 64 KiB line buffer
	tests := []struct {
		name, file, content string
		f                   TraceFormat
		want                []brief
	}{
		{"mooncake", "t.jsonl", `{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1, 2]}
{"timestamp": 3052, "input_length": 2287, "output_length": 316, "hash_ids": [0, 42]}
`, mooncake, []brief{{0, 6755, 500, []int64{0, 1, 2}, "", "", nil, 1}, {3052 * ms, 2287, 316, []int64{0, 42}, "", "", nil, 2}}},
		{"mooncake with AIPerf's sessions, text and messages", "t.jsonl",
			`{"session_id": "s-1", "timestamp": 10, "text_input": "Hello there", "output_length": 5}
{"session_id": 7, "timestamp": 12.5, "messages": [{"role": "user", "content": "Hi"}], "output_length": 0, "hash_ids": null}
{"timestamp": 20, "input_length": 3, "output_length": 1, "hash_ids": [], "text_input": null}
`, mooncake, []brief{
				{0, 0, 5, nil, "s-1", "Hello there", nil, 1},
				{2500 * time.Microsecond, 0, 0, nil, "7", "", []engine.Message{{Role: "user", Content: "Hi"}}, 2},
				{10 * ms, 3, 1, nil, "", "", nil, 3}}},
		{"bailian: seconds, sessions through parent_chat_id", "b.jsonl",
			`{"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.114, "input_length": 521, "output_length": 132, "type": "text", "turn": 1, "hash_ids": [1, 2]}
{"chat_id": 160, "parent_chat_id": 159, "timestamp": 62.5, "input_length": 676, "output_length": 80, "type": "text", "turn": 2, "hash_ids": [1, 2, 3]}
{"chat_id": 161, "parent_chat_id": -1, "timestamp": 63, "input_length": 10, "output_length": 8, "type": "search", "turn": 1}
{"chat_id": 170, "parent_chat_id": 160, "timestamp": 64, "input_length": 700, "output_length": 8, "turn": 3}
{"chat_id": 171, "parent_chat_id": 99, "timestamp": 65, "input_length": 9, "output_length": 8, "turn": 2}
`, TraceFormat{Kind: TraceBailian}, []brief{
				{0, 521, 132, []int64{1, 2}, "159", "", nil, 1},
				{1386 * ms, 676, 80, []int64{1, 2, 3}, "159", "", nil, 2},
				{1886 * ms, 10, 8, nil, "161", "", nil, 3},
				{2886 * ms, 700, 8, nil, "159", "", nil, 4},
				{3886 * ms, 9, 8, nil, "99", "", nil, 5}}}, // its parent is not in the file: the parent is the root
		{"azure 2023", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
			"2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:15:51.2224670,879,55\n",
			azure, []brief{{0, 374, 44, nil, "", "", nil, 2}, {4314579 * time.Microsecond, 396, 109, nil, "", "", nil, 3},
				{4541877 * time.Microsecond, 879, 55, nil, "", "", nil, 4}}},
		{"azure 2024: a time zone", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
			"2024-05-10 00:00:00.009930+00:00,2162,5\n2024-05-10 00:00:01.5+00:00,1000,6\n",
			azure, []brief{{0, 2162, 5, nil, "", "", nil, 2}, {1490070 * time.Microsecond, 1000, 6, nil, "", "", nil, 3}}},
		{"jsonl mapped, in seconds", "g.jsonl", `{"t": 1.5, "in": 10, "out": 5, "ids": [4, 5], "conv": "a", "prompt": "x"}
{"t": 2, "in": 20, "out": 6, "conv": "b", "chat": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
`, TraceFormat{Kind: TraceJSONL, TimeUnit: "s", Fields: TraceFields{Time: "t", Input: "in", Output: "out", HashIDs: "ids",
			Session: "conv", Text: "prompt", Messages: "chat"}}, []brief{
			{0, 10, 5, []int64{4, 5}, "a", "x", nil, 1},
			{500 * ms, 20, 6, nil, "b", "", []engine.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}, 2}}},
		{"jsonl RFC 3339 times", "g.jsonl", `{"timestamp": "2024-01-02T03:04:05Z", "input_length": 1, "output_length": 1}
{"timestamp": "2024-01-02T04:04:05.25+01:00", "input_length": 2, "output_length": 1}
`, TraceFormat{Kind: TraceJSONL}, []brief{{0, 1, 1, nil, "", "", nil, 1}, {250 * ms, 2, 1, nil, "", "", nil, 2}}},
		{"jsonl numeric strings, in µs", "g.jsonl", `{"timestamp": "1500", "input_length": 1, "output_length": 1}
{"timestamp": 2500, "input_length": 2.0, "output_length": 1}
`, TraceFormat{Kind: TraceJSONL, TimeUnit: "us"}, []brief{{0, 1, 1, nil, "", "", nil, 1}, {ms, 2, 1, nil, "", "", nil, 2}}},
		{"csv mapped: id lists, sessions, texts, ns", "g.csv", "time,isl,osl,blocks,sess,text\n" +
			"100,16,4,1 2 3,a,\n200,16,4,\"[1,2,4]\",b,\n300,16,4,\"1,2,5\",,\"say \"\"hi\"\"\nplease\"\n400,5,4,,,\n",
			TraceFormat{Kind: TraceCSV, TimeUnit: "ns", Fields: TraceFields{Time: "time", Input: "isl", Output: "osl",
				HashIDs: "blocks", Session: "sess", Text: "text"}}, []brief{
				{0, 16, 4, []int64{1, 2, 3}, "a", "", nil, 2}, {100, 16, 4, []int64{1, 2, 4}, "b", "", nil, 3},
				{200, 16, 4, []int64{1, 2, 5}, "", "say \"hi\"\nplease", nil, 4}, {300, 5, 4, nil, "", "", nil, 6}}},
		{"csv: texts without lengths", "g.csv", "timestamp,output_length,text_input\n0,3,hello\n",
			TraceFormat{Kind: TraceCSV}, []brief{{0, 0, 3, nil, "", "hello", nil, 2}}},
		{"csv: Mooncake's names by default, recased", "g.csv", "Timestamp,Input_Length,Output_Length\n0,3,4\n",
			TraceFormat{Kind: TraceCSV}, []brief{{0, 3, 4, nil, "", "", nil, 2}}},
		{"BOM, CRLF and blank lines", "t.jsonl", "\ufeff{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 2}\r\n\r\n   \r\n" +
			"{\"timestamp\": 6, \"input_length\": 3, \"output_length\": 4}\r\n", mooncake,
			[]brief{{0, 1, 2, nil, "", "", nil, 1}, {ms, 3, 4, nil, "", "", nil, 4}}},
		{"csv BOM and CRLF", "a.csv", "\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46,1,2\r\n\r\n2023-11-16 18:15:47,3,4\r\n",
			azure, []brief{{0, 1, 2, nil, "", "", nil, 2}, {time.Second, 3, 4, nil, "", "", nil, 4}}},
		{"a long line", "t.jsonl", `{"timestamp": 0, "text_input": "` + long + `", "output_length": 2}` + "\n",
			mooncake, []brief{{0, 0, 2, nil, "", long, nil, 1}}},
		{"64-bit ids", "t.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 2, "hash_ids": [18446744073709551615, -1, 7]}`,
			mooncake, []brief{{0, 1, 2, []int64{-1, -1, 7}, "", "", nil, 1}}},
		{"gzipped", "t.jsonl.gz", `{"timestamp": 0, "input_length": 1, "output_length": 2}`, mooncake,
			[]brief{{0, 1, 2, nil, "", "", nil, 1}}},
		{"negative times", "t.jsonl", `{"timestamp": -20, "input_length": 1, "output_length": 2}
{"timestamp": -10, "input_length": 1, "output_length": 2}`, mooncake,
			[]brief{{0, 1, 2, nil, "", "", nil, 1}, {10 * ms, 1, 2, nil, "", "", nil, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, _, err := loadTraceText(t, tt.file, tt.content, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := briefs(tr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("records:\n got %+v\nwant %+v", got, tt.want)
			}
			if tr.OutOfOrder != 0 {
				t.Errorf("OutOfOrder = %d for a sorted file", tr.OutOfOrder)
			}
		})
	}
}

// An unsorted file is sorted stably by time; each record keeps its line,
// and OutOfOrder says the indices are not the file's.
func TestLoadTraceSorts(t *testing.T) {
	tr, _, err := loadTraceText(t, "u.jsonl", `{"timestamp": 300, "input_length": 1, "output_length": 1}
{"timestamp": 100, "input_length": 2, "output_length": 1}
{"timestamp": 200, "input_length": 3, "output_length": 1}
{"timestamp": 100, "input_length": 4, "output_length": 1}
{"timestamp": 400, "input_length": 5, "output_length": 1}
`, mooncake)
	if err != nil {
		t.Fatal(err)
	}
	var in, lines []int
	var at []time.Duration
	for _, r := range tr.Records {
		in, lines, at = append(in, r.Input), append(lines, r.Line), append(at, r.At)
	}
	ms := time.Millisecond
	if want := []int{2, 4, 3, 1, 5}; !reflect.DeepEqual(in, want) {
		t.Errorf("order of inputs = %v, want %v (stable: line 2 before line 4)", in, want)
	}
	if want := []int{2, 4, 3, 1, 5}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines = %v, want %v", lines, want)
	}
	if want := []time.Duration{0, 0, 100 * ms, 200 * ms, 300 * ms}; !reflect.DeepEqual(at, want) {
		t.Errorf("offsets = %v, want %v", at, want)
	}
	if tr.OutOfOrder != 2 {
		t.Errorf("OutOfOrder = %d, want 2", tr.OutOfOrder)
	}
}

func TestLoadTraceFixtures(t *testing.T) {
	tr, err := LoadTrace("testdata/trace_azure.csv", azure)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != 30 || tr.Records[0].At != 0 || tr.Records[1].At != 101974*time.Microsecond {
		t.Errorf("azure fixture: %d records, first at %v, second at %v", len(tr.Records), tr.Records[0].At, tr.Records[1].At)
	}
	if tr.Format.BlockTokens != DefaultBlockTokens || tr.Format.Fields.Time != "TIMESTAMP" {
		t.Errorf("azure format not filled in: %+v", tr.Format)
	}
}

func TestLoadTraceErrors(t *testing.T) {
	ok := `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n"
	csvMapped := TraceFormat{Kind: TraceCSV, Fields: TraceFields{HashIDs: "ids", Messages: "msgs"}}
	tests := []struct {
		name, file, content string
		f                   TraceFormat
		want                string // after the file's path
	}{
		{"bad JSON", "t.jsonl", ok + `{"timestamp": 0,` + "\n", mooncake, ":2: invalid JSON"},
		{"not an object", "t.jsonl", "[1, 2]\n", mooncake, ":1: not a JSON object (got array)"},
		{"null", "t.jsonl", "null\n", mooncake, ":1: not a JSON object (got null)"},
		{"empty object", "t.jsonl", "{}\n", mooncake, ":1: timestamp: missing (the record is an empty object)"},
		{"missing input", "t.jsonl", ok + `{"timestamp": 1, "output_length": 1}`, mooncake,
			":2: input_length: missing (fields: output_length, timestamp)"},
		{"negative input", "t.jsonl", ok + ok + `{"timestamp": 0, "input_length": -3, "output_length": 1}`, mooncake,
			":3: input_length: expected a positive integer, got -3"},
		{"zero input", "t.jsonl", `{"timestamp": 0, "input_length": 0, "output_length": 1}`, mooncake,
			":1: input_length: expected a positive integer, got 0"},
		{"fractional input", "t.jsonl", `{"timestamp": 0, "input_length": 1.5, "output_length": 1}`, mooncake,
			":1: input_length: expected a positive integer, got 1.5"},
		{"input as a string", "t.jsonl", `{"timestamp": 0, "input_length": "12", "output_length": 1}`, mooncake,
			`:1: input_length: expected a positive integer, got "12"`},
		{"huge input", "t.jsonl", `{"timestamp": 0, "input_length": 2000000, "output_length": 1}`, mooncake,
			":1: input_length: 2000000 is more than 1048576 tokens"},
		{"enormous input", "t.jsonl", `{"timestamp": 0, "input_length": 1e300, "output_length": 1}`, mooncake,
			":1: input_length: 1e300 is more than 1048576 tokens"},
		{"overflowing input", "t.jsonl", `{"timestamp": 0, "input_length": 1e999, "output_length": 1}`, mooncake,
			":1: input_length: expected a positive integer, got 1e999"},
		{"negative output", "t.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": -1}`, mooncake,
			":1: output_length: expected a non-negative integer, got -1"},
		{"missing output", "t.jsonl", `{"timestamp": 0, "input_length": 1}`, mooncake, ":1: output_length: missing"},
		{"missing time", "t.jsonl", `{"input_length": 1, "output_length": 1}`, mooncake, ":1: timestamp: missing"},
		{"time not a time", "t.jsonl", `{"timestamp": "yesterday", "input_length": 1, "output_length": 1}`, mooncake,
			":1: timestamp: expected a number (in ms) or a time like 2023-11-16 18:15:46.68 or RFC 3339, got yesterday"},
		{"time a boolean", "t.jsonl", `{"timestamp": true, "input_length": 1, "output_length": 1}`, mooncake,
			":1: timestamp: expected a number or a time, got a boolean"},
		{"time too large", "t.jsonl", `{"timestamp": 1e300, "input_length": 1, "output_length": 1}`, mooncake,
			":1: timestamp: expected a time, got 1e300"},
		{"times mixed", "t.jsonl", `{"timestamp": "2024-01-02T03:04:05Z", "input_length": 1, "output_length": 1}` + "\n" + ok, mooncake,
			":2: timestamp: a number, but line 1's is an absolute time"},
		{"ids not an array", "t.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": "1 2"}`, mooncake,
			":1: hash_ids: expected an array of integers, got a string"},
		{"ids not integers", "t.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1, 2.5]}`, mooncake,
			":1: hash_ids: expected an array of integers, got [1, 2.5]"},
		{"messages not an array", "t.jsonl", `{"timestamp": 0, "output_length": 1, "messages": "hi"}`, mooncake,
			`:1: messages: want a messages array of {"role": ..., "content": ...} objects`},
		{"a message without content", "t.jsonl", `{"timestamp": 0, "output_length": 1, "messages": [{"role": "user"}]}`, mooncake,
			`:1: messages: message 1: no "content"`},
		{"empty messages", "t.jsonl", `{"timestamp": 0, "output_length": 1, "messages": []}`, mooncake,
			":1: messages: empty messages array"},
		{"text not a string", "t.jsonl", `{"timestamp": 0, "output_length": 1, "text_input": 5}`, mooncake,
			":1: text_input: expected a string, got a number"},
		{"session an object", "t.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1, "session_id": {}}`, mooncake,
			":1: session_id: expected a string or a number, got an object"},
		{"a Bailian trace read as Mooncake's", "t.jsonl", `{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1.5, "input_length": 1, "output_length": 1}`,
			mooncake, `:1: parent_chat_id: this looks like an Alibaba Bailian trace`},
		{"bad chat id", "b.jsonl", `{"chat_id": "x", "timestamp": 1.5, "input_length": 1, "output_length": 1}`,
			TraceFormat{Kind: TraceBailian}, `:1: chat_id: expected an integer, got "x"`},
		{"empty file", "t.jsonl", "", mooncake, ": no records"},
		{"blank lines only", "t.jsonl", "\n  \r\n\n", mooncake, ": no records"},
		{"binary", "t.jsonl", "{\"timestamp\": 0\x00}", mooncake, ":1: binary data"},
		{"csv header without a column", "a.csv", "TIMESTAMP,Tokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n", azure,
			`:1: no column "ContextTokens" (columns: TIMESTAMP, Tokens, GeneratedTokens)`},
		{"csv header without a named optional column", "g.csv", "timestamp,input_length,output_length\n0,1,1\n", csvMapped,
			`:1: no column "ids" (columns: timestamp, input_length, output_length)`},
		{"csv bad time", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n2023-13-16 18:15:46,1,1\n", azure,
			":3: TIMESTAMP: expected a number (in ms) or a time like 2023-11-16 18:15:46.68 or RFC 3339, got 2023-13-16 18:15:46"},
		{"csv NaN", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,NaN,1\n", azure,
			":2: ContextTokens: expected a positive integer, got NaN"},
		{"csv infinite", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,+Inf\n", azure,
			":2: GeneratedTokens: expected a non-negative integer, got +Inf"},
		{"csv NaN time", "g.csv", "timestamp,input_length,output_length\nNaN,1,1\n", TraceFormat{Kind: TraceCSV},
			":2: timestamp: expected a time, got NaN"},
		{"csv year out of range", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00,1,1\n", azure,
			":2: TIMESTAMP: expected a time, got 0001-01-01 00:00:00 (year out of range)"},
		{"csv empty file", "a.csv", "", azure, ": empty file (no header row, no records)"},
		{"csv header only", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", azure, ": no records"},
		{"csv short row", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1\n", azure,
			":2: GeneratedTokens: missing (the row has 2 fields)"},
		{"csv empty cell", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,,1\n", azure,
			":2: ContextTokens: missing"},
		{"csv bad quote", "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,\"1,1\n", azure,
			":2: extraneous or missing \" in quoted-field"},
		{"csv bad ids", "g.csv", "timestamp,input_length,output_length,ids\n0,1,1,1 x 3\n",
			TraceFormat{Kind: TraceCSV, Fields: TraceFields{HashIDs: "ids"}}, ":2: ids: expected a list of integers, got x at position 2"},
		{"csv bad messages", "g.csv", "timestamp,output_length,ids,msgs\n0,1,,\"[{\"\"role\"\": 1}]\"\n", csvMapped,
			`:2: msgs: message 1: "role" is a number, want a string`},
		{"csv multi-line cell then a bad value", "g.csv", "timestamp,input_length,output_length,text_input\n0,1,1,\"a\nb\"\n1,1,x,\n",
			TraceFormat{Kind: TraceCSV}, ":4: output_length: expected a non-negative integer, got x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path, err := loadTraceText(t, tt.file, tt.content, tt.f)
			if err == nil || !strings.HasPrefix(err.Error(), path+tt.want) {
				t.Errorf("err = %v\nwant %s%s…", err, path, tt.want)
			}
		})
	}
}

func TestLoadTraceLineTooLong(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 16 MB line")
	}
	content := `{"timestamp": 0, "output_length": 1, "text_input": "` + strings.Repeat("a", MaxLineBytes) + `"}`
	_, path, err := loadTraceText(t, "t.jsonl", content, mooncake)
	if err == nil || !strings.HasPrefix(err.Error(), path+":1: line longer than 16 MB") {
		t.Errorf("err = %v, want the line refused", err)
	}
}

func TestTraceFormatErrors(t *testing.T) {
	tests := []struct {
		f    TraceFormat
		want string
	}{
		{TraceFormat{}, "t.jsonl: trace format: no kind"},
		{TraceFormat{Kind: "sharegpt"}, `t.jsonl: trace format "sharegpt": want mooncake, bailian, azure, jsonl, csv or agent`},
		{TraceFormat{Kind: TraceMooncake, TimeUnit: "min"}, `t.jsonl: time_unit "min": want ms, s, us or ns`},
		{TraceFormat{Kind: TraceMooncake, BlockTokens: -1}, "t.jsonl: block_tokens -1 out of range"},
	}
	for _, tt := range tests {
		if _, err := LoadTrace("t.jsonl", tt.f); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.f, err, tt.want)
		}
	}
	if _, err := LoadTrace(filepath.Join(t.TempDir(), "none.jsonl"), mooncake); err == nil || !strings.Contains(err.Error(), "none.jsonl: no such file") {
		t.Errorf("missing file: err = %v", err)
	}
}

// Every VU that loads a trace shares one *Trace; another format is another
// load, and a failed load is not kept.
func TestLoadTraceCached(t *testing.T) {
	path := writeFile(t, "t.jsonl", []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1}`))
	var wg sync.WaitGroup
	got := make([]*Trace, 8)
	for i := range got {
		wg.Go(func() {
			tr, err := LoadTrace(path, mooncake)
			if err != nil {
				t.Error(err)
			}
			got[i] = tr
		})
	}
	wg.Wait()
	for _, tr := range got {
		if tr != got[0] {
			t.Fatal("concurrent loads gave different traces")
		}
	}
	// The defaults spelled out are the same format.
	if tr, _ := LoadTrace(path, TraceFormat{Kind: TraceMooncake, TimeUnit: "ms", BlockTokens: 512}); tr != got[0] {
		t.Error("the same format spelled out loaded again")
	}
	if tr, _ := LoadTrace(path, TraceFormat{Kind: TraceMooncake, BlockTokens: 16}); tr == got[0] {
		t.Error("another block size shared the trace")
	}

	bad := writeFile(t, "bad.jsonl", []byte("{"))
	if _, err := LoadTrace(bad, mooncake); err == nil {
		t.Fatal("bad file loaded")
	}
	if err := os.WriteFile(bad, []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTrace(bad, mooncake); err != nil {
		t.Errorf("the fixed file: %v", err)
	}
}
