package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/llmload/llmload/engine"
)

// LoadJSONL loads one JSON object per line of path, taking the prompt from
// o.Field: a string gives a prompt, an OpenAI messages array
// ([{"role":..., "content":...}]) a conversation. Blank lines and blank
// prompts are skipped. The file loads once per process per options: later
// calls return the same *Pool. Reading stops with an error once ctx is
// done. Safe for concurrent use.
func LoadJSONL(ctx context.Context, path string, o Options) (*Pool, error) {
	o = Options{Field: o.field()} // the other options do not apply
	return cached(path, "jsonl", o, func() (*Pool, error) { return loadJSONL(ctx, path, o.Field) })
}

func loadJSONL(ctx context.Context, path, field string) (*Pool, error) {
	var items []Item
	err := eachLine(ctx, path, func(line int, b []byte) error {
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		it, err := jsonlItem(b, field)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if !blank(it) {
			items = append(items, it)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return finish(path, items)
}

func jsonlItem(b []byte, field string) (Item, error) {
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(b, &rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Item{}, fmt.Errorf("not a JSON object (got %s)", te.Value)
		}
		return Item{}, fmt.Errorf("invalid JSON: %w", err)
	}
	raw, ok := rec[field]
	if !ok {
		return Item{}, fmt.Errorf("no field %q (fields: %s)", field, strings.Join(sortedKeys(rec), ", "))
	}
	return fieldItem(raw, field)
}

// fieldItem reads a prompt field: a string or a messages array.
func fieldItem(raw json.RawMessage, field string) (Item, error) {
	switch firstByte(raw) {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Item{}, fmt.Errorf("field %q: %w", field, err)
		}
		return Item{Text: s}, nil
	case '[':
		msgs, err := messages(raw)
		if err != nil {
			return Item{}, fmt.Errorf("field %q: %w", field, err)
		}
		return Item{Messages: msgs}, nil
	}
	return Item{}, fmt.Errorf("field %q is %s, want a string or a messages array", field, jsonKind(raw))
}

// messages decodes an OpenAI messages array, whose every entry must have a
// string role and a string content.
func messages(raw json.RawMessage) ([]engine.Message, error) {
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, errors.New("want a messages array of {\"role\": ..., \"content\": ...} objects")
	}
	if len(entries) == 0 {
		return nil, errors.New("empty messages array")
	}
	msgs := make([]engine.Message, len(entries))
	for i, e := range entries {
		var err error
		if msgs[i].Role, err = stringField(e, "role"); err == nil {
			msgs[i].Content, err = stringField(e, "content")
		}
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, err)
		}
	}
	return msgs, nil
}

func stringField(obj map[string]json.RawMessage, name string) (string, error) {
	raw, ok := obj[name]
	if !ok {
		return "", fmt.Errorf("no %q", name)
	}
	var s string
	if firstByte(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%q is %s, want a string", name, jsonKind(raw))
	}
	return s, nil
}

func firstByte(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// jsonKind names a JSON value's type for error messages.
func jsonKind(raw json.RawMessage) string {
	switch c := firstByte(raw); {
	case c == '"':
		return "a string"
	case c == '[':
		return "an array"
	case c == '{':
		return "an object"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return "a number"
	}
}

// blank reports whether an item has nothing to send.
func blank(it Item) bool {
	return it.Messages == nil && strings.TrimSpace(it.Text) == ""
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
