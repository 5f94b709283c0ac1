package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/llmload/llmload/engine"
)

// LoadShareGPT loads a ShareGPT file: a JSON array (or one object a line)
// of records {"conversations": [{"from": "human", "value": ...}, {"from":
// "gpt", ...}]}, or {"messages": [{"role": ..., "content": ...}]}. Each
// record gives its first human turn, or with o.Conversations its whole
// conversation up to its last human turn (a chat request must end with the
// user's turn). Records without a human turn are skipped. The file loads
// once per process per options: later calls return the same *Pool. Reading
// stops with an error once ctx is done. Safe for concurrent use.
func LoadShareGPT(ctx context.Context, path string, o Options) (*Pool, error) {
	o = Options{Conversations: o.Conversations} // the other options do not apply
	return cached(path, "sharegpt", o, func() (*Pool, error) { return loadShareGPT(ctx, path, o.Conversations) })
}

func loadShareGPT(ctx context.Context, path string, whole bool) (*Pool, error) {
	s, err := openSource(ctx, path, recordLimits)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var items []Item
	err = eachRecord(s.r, s.g.recordEnded, func(n int, raw json.RawMessage) error {
		it, err := shareGPTItem(raw, whole)
		if err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		if it.Messages != nil || it.Text != "" {
			items = append(items, it)
		}
		return nil
	})
	var se *sourceError
	if errors.As(err, &se) { // the guard refused the content: it knows the line
		return nil, se
	}
	var re *recordError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("%s:%d: %w", path, lineAt(path, re.offset), re.err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return finish(path, items)
}

// recordError is a failure at a byte offset of the decompressed content.
type recordError struct {
	offset int64
	err    error
}

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// recordLimits are the limits of a ShareGPT file, whose records may share
// one line (a JSON array written without indentation): a record, not a
// line, is bounded.
var recordLimits = limits{maxRecord: MaxLineBytes, maxTotal: MaxFileBytes}

// eachRecord calls fn with every record (numbered from 1) of a JSON array,
// or of a stream of JSON values (one a line, as in JSONL), decoding one at
// a time so that a large file never sits in memory whole. ended is told
// the input offset after each record, so the reader can bound the next.
func eachRecord(r io.Reader, ended func(off int64), fn func(n int, raw json.RawMessage) error) error {
	br := bufio.NewReader(r)
	c, err := firstNonSpace(br)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	dec := json.NewDecoder(br)
	if c == '[' {
		dec.Token() // the '[' just peeked
	}
	for n := 1; dec.More(); n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &recordError{dec.InputOffset(), fmt.Errorf("invalid JSON: %w", err)}
		}
		if err := fn(n, raw); err != nil {
			return &recordError{dec.InputOffset() - int64(len(raw)), err}
		}
		ended(dec.InputOffset())
	}
	if c != '[' {
		return nil
	}
	if _, err := dec.Token(); err != nil {
		return &recordError{dec.InputOffset(), fmt.Errorf("invalid JSON: %w", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &recordError{dec.InputOffset(), errors.New("invalid JSON: data after the closing ]")}
	}
	return nil
}

// firstNonSpace peeks at the first byte that is not JSON whitespace.
func firstNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte()
		default:
			return b[0], nil
		}
	}
}

func shareGPTItem(raw json.RawMessage, whole bool) (Item, error) {
	if firstByte(raw) != '{' {
		return Item{}, fmt.Errorf("is %s, want an object with \"conversations\"", jsonKind(raw))
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Item{}, err
	}
	turns, ok := rec["conversations"]
	if !ok {
		if turns, ok = rec["messages"]; !ok {
			return Item{}, errors.New(`no "conversations" or "messages"`)
		}
	}
	msgs, err := shareGPTTurns(turns)
	if err != nil {
		return Item{}, err
	}
	return conversationItem(msgs, whole), nil
}

// shareGPTTurns decodes turns given as {"from", "value"} or {"role",
// "content"}, with ShareGPT's speaker names mapped to chat roles.
func shareGPTTurns(raw json.RawMessage) ([]engine.Message, error) {
	var turns []map[string]json.RawMessage
	if firstByte(raw) != '[' || json.Unmarshal(raw, &turns) != nil {
		return nil, fmt.Errorf("conversation is %s, want an array of turns", jsonKind(raw))
	}
	msgs := make([]engine.Message, 0, len(turns))
	for i, t := range turns {
		m, err := shareGPTTurn(t)
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", i+1, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func shareGPTTurn(t map[string]json.RawMessage) (engine.Message, error) {
	who, text := "from", "value"
	if _, ok := t[who]; !ok {
		who, text = "role", "content"
	}
	speaker, err := stringField(t, who)
	if err != nil {
		return engine.Message{}, fmt.Errorf(`%w (want "from"/"value" or "role"/"content")`, err)
	}
	role, ok := shareGPTRoles[speaker]
	if !ok {
		return engine.Message{}, fmt.Errorf("unknown speaker %q", speaker)
	}
	content, err := stringField(t, text)
	if err != nil {
		return engine.Message{}, err
	}
	return engine.Message{Role: role, Content: content}, nil
}

// shareGPTRoles maps the speaker names found in ShareGPT dumps to roles.
var shareGPTRoles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "chatgpt": "assistant", "bing": "assistant", "bard": "assistant",
	"assistant": "assistant", "model": "assistant",
	"system": "system",
}

// conversationItem gives the first non-blank user turn, or the
// conversation cut after its last user turn; the zero Item when it has no
// user turn.
func conversationItem(msgs []engine.Message, whole bool) Item {
	last := -1
	for i, m := range msgs {
		if m.Role != "user" || blank(Item{Text: m.Content}) {
			continue
		}
		if !whole {
			return Item{Text: m.Content}
		}
		last = i
	}
	if last < 0 {
		return Item{}
	}
	return Item{Messages: msgs[: last+1 : last+1]}
}
