package openai

import (
	"github.com/llmload/llmload/engine"
)

// toolCalls gathers an answer's tool calls as their pieces arrive: the
// first piece of a call names it (id and function name), later ones
// append to its arguments. Calls are keyed by the index the server gives
// each (a chat delta's index, a Responses output_index, a Messages content
// block's index) and kept in order of first appearance. An answer without
// tool calls costs nothing. Used by one goroutine.
type toolCalls struct {
	calls []toolCall
}

// toolCall is one call being gathered. Its arguments are bytes, not a
// strings.Builder: calls move when the slice grows.
type toolCall struct {
	index    int
	id, name string
	args     []byte
}

// arg appends a piece of the arguments.
func (c *toolCall) arg(piece string) { c.args = append(c.args, piece...) }

// at returns the call of index, added when new.
func (t *toolCalls) at(index int) *toolCall {
	for i := range t.calls {
		if t.calls[i].index == index {
			return &t.calls[i]
		}
	}
	t.calls = append(t.calls, toolCall{index: index})
	return &t.calls[len(t.calls)-1]
}

// name sets the id and name of a call where a piece carries them; a
// server that repeats them in every piece changes nothing.
func (c *toolCall) named(id, name string) {
	if id != "" {
		c.id = id
	}
	if name != "" {
		c.name = name
	}
}

// list returns the calls, nil when there are none.
func (t *toolCalls) list() []engine.ToolCall {
	if len(t.calls) == 0 {
		return nil
	}
	out := make([]engine.ToolCall, len(t.calls))
	for i := range t.calls {
		c := &t.calls[i]
		out[i] = engine.ToolCall{ID: c.id, Name: c.name, Arguments: string(c.args)}
	}
	return out
}

// reset forgets every call, keeping the slice.
func (t *toolCalls) reset() { t.calls = t.calls[:0] }
