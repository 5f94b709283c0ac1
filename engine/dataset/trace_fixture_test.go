package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/llmload/llmload/engine/golden"
)

// fixtureBlock is the block size testdata/trace_mooncake.jsonl is meant
// for: small, so its prompts stay small.
const fixtureBlock = 16

// fixtureLine is one request of a generated trace.
type fixtureLine struct {
	ts      int64 // ms
	in, out int
	ids     []int64
	session string
}

// mooncakeFixture generates testdata/trace_mooncake.jsonl: about 200
// requests over 4 s in Mooncake's format, shaped like its conversation and
// tool-agent traces. Every request opens with one system prompt (as
// Mooncake's id 0 does); a conversation's turn resends the history and adds
// to it, a tool agent's steps share the tool definitions and their own
// history; the rest are one-off requests. Deterministic, so -update
// rewrites the same file.
func mooncakeFixture() []byte {
	r := rand.New(rand.NewPCG(15, 2026))
	var next int64
	fresh := func(n int) []int64 {
		ids := make([]int64, n)
		for i := range ids {
			ids[i], next = next, next+1
		}
		return ids
	}
	system := fresh(4)
	tools := fresh(6)
	var lines []fixtureLine
	add := func(ts int64, ids []int64, out int, session string) {
		in := len(ids)*fixtureBlock - r.IntN(fixtureBlock) // the last block is partial
		lines = append(lines, fixtureLine{ts, in, out, slices.Clone(ids), session})
	}
	for s := 1; s <= 6; s++ { // conversations
		ids := slices.Concat(system, fresh(2+r.IntN(4)))
		for ts := r.Int64N(1500); ts < 4000 && len(ids) < 60; ts += 150 + r.Int64N(300) {
			add(ts, ids, 20+r.IntN(200), fmt.Sprintf("conv-%d", s))
			ids = append(ids, fresh(2+r.IntN(6))...) // the answer, then the next question
		}
	}
	for s := 1; s <= 4; s++ { // tool agents
		ids := slices.Concat(system, tools, fresh(2+r.IntN(3)))
		for ts := r.Int64N(1000); ts < 4000 && len(ids) < 60; ts += 80 + r.Int64N(200) {
			add(ts, ids, 15+r.IntN(60), fmt.Sprintf("agent-%d", s))
			ids = append(ids, fresh(1+r.IntN(3))...) // the call and the tool's result
		}
	}
	for len(lines) < 200 { // one-off requests
		add(r.Int64N(4000), slices.Concat(system, fresh(1+r.IntN(30))), 10+r.IntN(300), "")
	}
	slices.SortStableFunc(lines, func(a, b fixtureLine) int { return int(a.ts - b.ts) })
	var b bytes.Buffer
	for _, l := range lines {
		ids, _ := json.Marshal(l.ids)
		ids = bytes.ReplaceAll(ids, []byte(","), []byte(", ")) // as Mooncake writes them
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": %s`, l.ts, l.in, l.out, ids)
		if l.session != "" {
			fmt.Fprintf(&b, `, "session_id": %q`, l.session)
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// azureFixture generates testdata/trace_azure.csv: 30 requests over about
// 12 s, shaped like Azure's 2023 conversation trace (its header, its
// absolute times with 7 fractional digits), with values of our own.
func azureFixture() []byte {
	r := rand.New(rand.NewPCG(2023, 11))
	t := time.Date(2023, 11, 16, 18, 15, 46, 680590000, time.UTC)
	var b bytes.Buffer
	b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	for range 30 {
		fmt.Fprintf(&b, "%s,%d,%d\n", t.Format("2006-01-02 15:04:05.0000000"), 20+r.IntN(2000), 10+r.IntN(500))
		t = t.Add(time.Duration(r.Int64N(int64(800 * time.Millisecond))))
	}
	return b.Bytes()
}

func TestTraceFixtures(t *testing.T) {
	golden.Check(t, "trace_mooncake.jsonl", mooncakeFixture())
	golden.Check(t, "trace_azure.csv", azureFixture())
}

// The fixture is what its comment says: about 200 records over about 4 s,
// a few sessions, and prefixes shared as in a multi-turn trace.
func TestTraceMooncakeFixture(t *testing.T) {
	tr, err := LoadTrace("testdata/trace_mooncake.jsonl", TraceFormat{Kind: TraceMooncake, BlockTokens: fixtureBlock})
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Stats()
	t.Logf("%+v", s)
	if s.Records < 190 || s.Records > 260 {
		t.Errorf("records = %d, want about 200", s.Records)
	}
	if s.DurationS < 3.5 || s.DurationS > 4.0 {
		t.Errorf("duration = %.2fs, want about 4s", s.DurationS)
	}
	if s.Sessions != 10 || s.WithHashIDs != s.Records {
		t.Errorf("sessions = %d, records with ids = %d of %d; want 10 and all", s.Sessions, s.WithHashIDs, s.Records)
	}
	if s.PrefixReuse < 0.3 || s.PrefixReuse > 0.9 {
		t.Errorf("prefix reuse = %.2f, want a multi-turn trace's", s.PrefixReuse)
	}
	if s.Input.Max > 1000 {
		t.Errorf("longest prompt = %d tokens, want small prompts", s.Input.Max)
	}
}
