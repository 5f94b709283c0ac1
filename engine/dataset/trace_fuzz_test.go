package dataset

import (
	"strings"
	"sync"
	"testing"
)

// The fuzz targets run their seeds (testdata/fuzz/Fuzz*/ and the f.Add
// ones) as normal tests. Whatever the bytes, a load ends in an error that
// names the file, or in records that replay and prompt as documented.

func FuzzLoadTraceMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1, 2, 3]}`))
	f.Add([]byte(`{"session_id": "s", "timestamp": 3, "text_input": "hi", "output_length": 5}` + "\n" +
		`{"session_id": 1, "timestamp": 1, "messages": [{"role": "user", "content": "x"}], "output_length": 0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTraceLoad(t, "f.jsonl", data, TraceFormat{Kind: TraceMooncake, BlockTokens: 16}, TraceFormat{Kind: TraceBailian})
	})
}

func FuzzLoadTraceCSV(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"))
	f.Add([]byte("timestamp,input_length,output_length,hash_ids,session_id\n5,20,3,\"[1,2]\",a\n1,9,3,1 2,b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTraceLoad(t, "f.csv", data, TraceFormat{Kind: TraceCSV, BlockTokens: 16}, TraceFormat{Kind: TraceAzure})
	})
}

var fuzzPrompter = sync.OnceValues(func() (*TracePrompter, error) { return NewTracePrompter("cl100k_base", 16, 1) })

func checkTraceLoad(t *testing.T, name string, data []byte, formats ...TraceFormat) {
	path := writeFile(t, name, data)
	for _, f := range formats {
		nf, err := f.normalized()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := loadTrace(t.Context(), path, nf)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("%s: the error does not name the file: %v", f.Kind, err)
			}
			continue
		}
		checkTrace(t, tr)
	}
}

// checkTrace holds a loaded trace to what LoadTrace promises.
func checkTrace(t *testing.T, tr *Trace) {
	if len(tr.Records) == 0 || tr.Records[0].At != 0 {
		t.Fatalf("%d records, the first at %v", len(tr.Records), tr.Records[0].At)
	}
	for i, r := range tr.Records {
		switch {
		case i > 0 && r.At < tr.Records[i-1].At:
			t.Errorf("record %d at %v, before record %d", i, r.At, i-1)
		case r.Input < 0 || r.Input > MaxSyntheticTokens || r.Output < 0 || r.Output > MaxSyntheticTokens:
			t.Errorf("record %d: lengths %d, %d out of range", i, r.Input, r.Output)
		case r.Input == 0 && r.Text == "" && r.Messages == nil:
			t.Errorf("record %d has no prompt", i)
		case r.Line < 1:
			t.Errorf("record %d: line %d", i, r.Line)
		}
	}
	rp, err := tr.Replay(ReplayOptions{Sessions: true})
	if err != nil || len(rp.Arrivals) != len(tr.Records) {
		t.Fatalf("replay: %v", err)
	}
	if s := tr.Stats(); s.Records != len(tr.Records) || s.PrefixReuse < 0 || s.PrefixReuse > 1 {
		t.Errorf("stats: %+v", s)
	}
	p, err := fuzzPrompter()
	if err != nil {
		t.Fatal(err)
	}
	for i := range min(len(tr.Records), 3) {
		r := &tr.Records[i]
		if r.Text != "" || r.Messages != nil || r.Input > 4096 {
			continue
		}
		if text, n := p.Prompt(r, i); n != r.Input || len(text) < n {
			t.Errorf("record %d: a prompt of %d tokens (%d bytes) for an input of %d", i, n, len(text), r.Input)
		}
	}
}
