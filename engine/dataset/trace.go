package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/llmload/llmload/engine"
)

// Trace formats LoadTrace reads.
const (
	// TraceMooncake is Mooncake's JSONL (FAST'25 traces, as vLLM, SGLang
	// and AIPerf read them): timestamp in ms, input_length, output_length,
	// hash_ids (512 tokens a block), and AIPerf's optional session_id,
	// text_input and messages.
	TraceMooncake = "mooncake"
	// TraceBailian is Alibaba Bailian's JSONL (qwen-bailian-usagetraces-anon):
	// Mooncake's fields with timestamps in seconds, 16 tokens a block, and
	// sessions linked through chat_id and parent_chat_id.
	TraceBailian = "bailian"
	// TraceAzure is Azure's LLM inference traces (2023, 2024): CSV with
	// TIMESTAMP (absolute, "2023-11-16 18:15:46.6805900"), ContextTokens and
	// GeneratedTokens.
	TraceAzure = "azure"
	// TraceJSONL and TraceCSV read other files through TraceFields; their
	// defaults are Mooncake's names.
	TraceJSONL = "jsonl"
	TraceCSV   = "csv"
	// TraceAgent is llmload's own JSONL of agent trees: Mooncake's fields
	// plus id, parent, delay_ms (the gap after the parent's answer) and
	// session; timestamp (ms) only on roots.
	TraceAgent = "agent"
)

// DefaultBlockTokens is the tokens one hash id stands for unless the format
// says otherwise: Mooncake's 512.
const DefaultBlockTokens = 512

// bailianBlockTokens is the block size of Bailian's traces (the files are
// named *_blksz_16.jsonl).
const bailianBlockTokens = 16

// TraceFormat says how to read a trace file. The zero value of each field
// picks its default; Kind is required.
type TraceFormat struct {
	Kind string // TraceMooncake, TraceBailian, TraceAzure, TraceJSONL, TraceCSV or TraceAgent
	// Fields names the JSONL fields or CSV columns; a name left empty is
	// the kind's.
	Fields TraceFields
	// TimeUnit is the unit of numeric timestamps: "ms" (the default; "s"
	// for Bailian), "s", "us" or "ns". Timestamps written as dates (RFC
	// 3339, or "2006-01-02 15:04:05.9999999") are absolute whatever it says.
	TimeUnit string
	// BlockTokens is the tokens each hash id stands for: 512 (Mooncake),
	// 16 for Bailian.
	BlockTokens int
	// DelayUnit is the unit of a child's delay after its parent's
	// answer: "ms" (the default), "s", "us" or "ns".
	DelayUnit string
}

// TraceFields names where each value of a record is. Time, Input and
// Output are required in every record (Input may be missing where Text or
// Messages is given); the others are optional, but a CSV header must have
// every column named explicitly.
//
// ID, Parent and Delay make trees: a record naming a Parent (by its ID)
// starts Delay after that record's answer, not at a time of its own. With
// no Parent field, a record with a Delay follows its session's previous
// record (AIPerf's multi-turn Mooncake rows: session_id and delay).
type TraceFields struct {
	Time, Input, Output string
	HashIDs, Session    string
	Text, Messages      string
	ID, Parent, Delay   string
}

// traceDefaults are Mooncake's names, which AIPerf extended with sessions,
// texts and messages.
var traceDefaults = TraceFields{Time: "timestamp", Input: "input_length", Output: "output_length",
	HashIDs: "hash_ids", Session: "session_id", Text: "text_input", Messages: "messages", Delay: "delay"}

// agentFields are the fields of llmload's own agent-tree JSONL.
var agentFields = TraceFields{Time: "timestamp", Input: "input_length", Output: "output_length",
	HashIDs: "hash_ids", Session: "session", Text: "text_input", Messages: "messages",
	ID: "id", Parent: "parent", Delay: "delay_ms"}

// bailianFields are the fields of Bailian's traces; its sessions are
// read from chat_id and parent_chat_id.
var bailianFields = TraceFields{Time: "timestamp", Input: "input_length", Output: "output_length", HashIDs: "hash_ids"}

// azureFields are the columns of Azure's LLM inference traces.
var azureFields = TraceFields{Time: "TIMESTAMP", Input: "ContextTokens", Output: "GeneratedTokens"}

// Trace is a loaded trace file: its records sorted by time. Immutable and
// shared by every VU: never modify a record. Safe for concurrent use.
type Trace struct {
	// Path is the file as the first LoadTrace call named it.
	Path string
	// Format is the format read, its defaults filled in.
	Format TraceFormat
	// Records are in order of time; a record's index here is the one
	// TraceArrival.Record names. A parent comes before its children.
	Records []TraceRecord
	// Children counts the records timed by a parent (TraceRecord.Parent).
	Children int
	// OutOfOrder counts the records whose time was earlier than the one
	// before them in the file: when it is not 0, the file was sorted
	// (stably), so indices are positions after sorting, not in the file;
	// each record's Line still names its line.
	OutOfOrder int

	sum [32]byte // SHA-256 of the file's (decompressed) content
}

// TraceRecord is one request of a trace.
type TraceRecord struct {
	// At is the record's time less the earliest record's.
	At     time.Duration
	Input  int // prompt tokens (0 when unknown: Text or Messages give the prompt)
	Output int // tokens generated (the request's max_tokens)
	// HashIDs name the prompt's blocks, BlockTokens tokens each: records
	// whose ids start alike share that prefix.
	HashIDs  []int64
	Session  string           // "" when the record is in no session
	Text     string           // the prompt as recorded, if the trace has it
	Messages []engine.Message // the conversation as recorded, if the trace has it
	Line     int              // the record's line in the file (its first, in CSV)
	// ID is the record's own id, as children name it ("" when none).
	ID string
	// Parent is 0 for a root, timed by its own time; otherwise 1 + the
	// index in Records of the record whose answer it follows, Delay
	// after it. A child's At is only its earliest time: its parent's At
	// plus Delay, as if every answer were instant.
	Parent int
	Delay  time.Duration
	// Depth is 0 for a root, 1 for its children, and so on.
	Depth int
}

// LoadTrace loads a trace file in format f; see LoadTraceContext.
func LoadTrace(path string, f TraceFormat) (*Trace, error) {
	return LoadTraceContext(context.Background(), path, f)
}

// LoadTraceContext loads a trace file, plain or gzipped, in format f. Every
// error names the file and, for a bad record, its line and field. The file
// loads once per process per format: later calls return the same *Trace.
// Reading stops with an error once ctx is done. Safe for concurrent use.
func LoadTraceContext(ctx context.Context, path string, f TraceFormat) (*Trace, error) {
	f, err := f.normalized()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cachedLoad(path, "trace", f, func() (*Trace, error) { return loadTrace(ctx, path, f) })
}

// normalized checks f and fills in its defaults.
func (f TraceFormat) normalized() (TraceFormat, error) {
	unit, block := "ms", DefaultBlockTokens
	switch f.Kind {
	case TraceMooncake, TraceJSONL, TraceCSV, TraceAzure, TraceAgent:
	case TraceBailian:
		unit, block = "s", bailianBlockTokens
	case "":
		return f, errors.New("trace format: no kind (want mooncake, bailian, azure, jsonl, csv or agent)")
	default:
		return f, fmt.Errorf("trace format %q: want mooncake, bailian, azure, jsonl, csv or agent", f.Kind)
	}
	f.Fields = f.Fields.or(kindFields(f.Kind))
	if f.TimeUnit == "" {
		f.TimeUnit = unit
	}
	if _, ok := timeUnits[f.TimeUnit]; !ok {
		return f, fmt.Errorf("time_unit %q: want ms, s, us or ns", f.TimeUnit)
	}
	if f.DelayUnit == "" {
		f.DelayUnit = "ms"
	}
	if _, ok := timeUnits[f.DelayUnit]; !ok {
		return f, fmt.Errorf("delay_unit %q: want ms, s, us or ns", f.DelayUnit)
	}
	if f.BlockTokens == 0 {
		f.BlockTokens = block
	}
	if f.BlockTokens < 1 || f.BlockTokens > MaxSyntheticTokens {
		return f, fmt.Errorf("block_tokens %d out of range [1, %d]", f.BlockTokens, MaxSyntheticTokens)
	}
	return f, nil
}

// kindFields are a kind's default names.
func kindFields(kind string) TraceFields {
	switch kind {
	case TraceAzure:
		return azureFields
	case TraceBailian:
		return bailianFields
	case TraceAgent:
		return agentFields
	}
	return traceDefaults
}

// or fills the empty names of fs from def.
func (fs TraceFields) or(def TraceFields) TraceFields {
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	return TraceFields{Time: pick(fs.Time, def.Time), Input: pick(fs.Input, def.Input),
		Output: pick(fs.Output, def.Output), HashIDs: pick(fs.HashIDs, def.HashIDs),
		Session: pick(fs.Session, def.Session), Text: pick(fs.Text, def.Text),
		Messages: pick(fs.Messages, def.Messages), ID: pick(fs.ID, def.ID),
		Parent: pick(fs.Parent, def.Parent), Delay: pick(fs.Delay, def.Delay)}
}

// csvKind reports whether the format is read as CSV.
func (f TraceFormat) csvKind() bool { return f.Kind == TraceAzure || f.Kind == TraceCSV }

// timed is a record as read, with its raw time.
type timed struct {
	rec TraceRecord
	t   stamp
	// chat and parent are Bailian's chat_id and parent_chat_id (-1: none).
	chat, parent int64
	link         treeLink
}

// chatLink is a Bailian record's place in its session's chain.
type chatLink struct{ chat, parent int64 }

func loadTrace(ctx context.Context, path string, f TraceFormat) (*Trace, error) {
	tr := newTraceReader(path, f)
	read := readTraceJSONL
	if f.csvKind() {
		read = readTraceCSV
	}
	sum, err := read(ctx, tr)
	if err != nil {
		return nil, err
	}
	recs := tr.recs
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	if cap(recs) > len(recs)+len(recs)/16 {
		recs = append([]TraceRecord(nil), recs...) // drop append's growth slack
	}
	if f.Kind == TraceBailian {
		bailianSessions(recs, tr.chats)
	}
	children, err := linkTrees(path, f.Fields, recs, tr.links)
	if err != nil {
		return nil, err
	}
	recs, out := sortByTime(recs)
	t := &Trace{Path: path, Format: f, Records: recs, Children: children, OutOfOrder: out, sum: sum}
	return t, nil
}

// add keeps a record read, its At still the raw time. A file that mixes
// absolute times with numbers is refused at the first record that
// differs: their difference means nothing.
func (tr *traceReader) add(r timed) error {
	if r.link.child() {
		// Timed by its parent: its own time, if any, is not read.
		tr.recs = append(tr.recs, r.rec)
		tr.links = append(tr.links, r.link)
		return nil
	}
	if !tr.timed {
		tr.abs, tr.firstLine, tr.timed = r.t.abs, r.rec.Line, true
	} else if r.t.abs != tr.abs {
		what := map[bool]string{true: "an absolute time", false: "a number"}
		return fieldError(tr.path, r.rec.Line, tr.f.Fields.Time, fmt.Errorf("%s, but line %d's is %s: a trace's times must all be one or the other",
			what[r.t.abs], tr.firstLine, what[tr.abs]))
	}
	r.rec.At = time.Duration(r.t.ns)
	tr.recs = append(tr.recs, r.rec)
	tr.links = append(tr.links, r.link)
	if tr.f.Kind == TraceBailian {
		tr.chats = append(tr.chats, chatLink{r.chat, r.parent})
	}
	return nil
}

// sortByTime sorts recs, whose At are raw times, stably by time (a parent
// before its children at the same time), makes At the offset from the
// first, renumbers Parent to the sorted order, and returns the sorted
// records and how many were earlier than the one before them.
func sortByTime(recs []TraceRecord) ([]TraceRecord, int) {
	n := 0
	for i := 1; i < len(recs); i++ {
		if recs[i].At < recs[i-1].At || recs[i].At == recs[i-1].At && recs[i].Depth < recs[i-1].Depth {
			n++
		}
	}
	if n > 0 {
		recs = sortRecords(recs)
	}
	first := recs[0].At
	for i := range recs {
		recs[i].At -= first
	}
	return recs, n
}

// sortRecords is recs in order of (At, Depth), stably, with each Parent
// renumbered to its parent's new place.
func sortRecords(recs []TraceRecord) []TraceRecord {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(recs[a].At, recs[b].At), cmp.Compare(recs[a].Depth, recs[b].Depth))
	})
	moved := make([]int, len(recs)) // old index -> new
	out := make([]TraceRecord, len(recs))
	for to, from := range order {
		moved[from] = to
		out[to] = recs[from]
	}
	for i := range out {
		if p := out[i].Parent; p != 0 {
			out[i].Parent = moved[p-1] + 1
		}
	}
	return out
}

// bailianSessions names each record's session after the root of its
// chat_id → parent_chat_id chain. A parent missing from the file (a trace
// cut short) is taken as the root, so its children stay one session.
func bailianSessions(recs []TraceRecord, chats []chatLink) {
	parent := make(map[int64]int64, len(chats))
	for _, c := range chats {
		if c.chat >= 0 {
			parent[c.chat] = c.parent
		}
	}
	names := map[int64]string{}
	for i, c := range chats {
		if c.chat < 0 {
			continue
		}
		root := c.chat
		// Bounded: a cycle in bad data must not hang the load.
		for range len(chats) {
			p, ok := parent[root]
			if !ok || p < 0 {
				break
			}
			root = p
			if _, known := parent[p]; !known {
				break
			}
		}
		name, ok := names[root]
		if !ok {
			name = strconv.FormatInt(root, 10)
			names[root] = name
		}
		recs[i].Session = name
	}
}
