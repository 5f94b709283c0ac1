package api

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/luaval"
	lua "github.com/yuin/gopher-lua"
)

// conversation is a multi-turn chat a VU holds, as made by
// llm.conversation: its history grows with each turn and is sent whole,
// as a chat client does. Used by the VU's goroutine only.
type conversation struct {
	history []engine.Message
	tags    map[string]string
	turns   int              // completed turns: answers appended
	source  []engine.Message // a pool conversation being replayed
	cursor  int              // next source message replay_next looks at
	sending bool             // a send is waiting for its answer
}

var conversationKeys = []string{"system", "tags", "messages"}

// newConversation implements llm.conversation{ system = "...", tags = {...},
// messages = item } -> conversation. messages is a pool conversation (a
// ShareGPT item) to replay: its leading system message starts the history
// and conv:replay_next() feeds its user turns one by one, while the
// answers come from the server under test, not from the recording.
func (m *Module) newConversation(L *lua.LState) int {
	const path = "llm.conversation"
	d := &ArgDecoder{}
	f := d.Record(path, L.OptTable(1, L.CreateTable(0, 0)), conversationKeys)
	c := &conversation{}
	if v := f["system"]; v != nil {
		c.history = append(c.history, engine.Message{Role: "system", Content: d.Str(luaval.Child(path, "system"), v)})
	}
	if v := f["tags"]; v != nil {
		c.tags = d.StringMap(luaval.Child(path, "tags"), v)
	}
	if v := f["messages"]; v != nil {
		c.source = d.Messages(luaval.Child(path, "messages"), v)
		if f["system"] == nil && len(c.source) > 0 && c.source[0].Role == "system" {
			c.history = append(c.history, c.source[0])
			c.cursor = 1
		}
	}
	if err := d.Joined(); err != nil {
		L.RaiseError("%v", err)
	}
	ud := L.NewUserData()
	ud.Value = c
	L.SetMetatable(ud, m.conversationMetatable(L))
	L.Push(ud)
	return 1
}

func (m *Module) conversationMetatable(L *lua.LState) *lua.LTable {
	if m.convMeta == nil {
		methods := L.SetFuncs(L.CreateTable(0, 7), map[string]lua.LGFunction{
			"user": convUser, "send": m.convSend, "turns": convTurns,
			"messages": convMessages, "replay_next": convReplayNext,
			"tool": convTool, "fork": m.convFork,
		})
		m.convMeta = L.CreateTable(0, 2)
		m.convMeta.RawSetString("__index", methods)
		m.convMeta.RawSetString("__metatable", lua.LString("llmload.conversation"))
	}
	return m.convMeta
}

func checkConversation(L *lua.LState) *conversation {
	if ud, ok := L.Get(1).(*lua.LUserData); ok {
		if c, ok := ud.Value.(*conversation); ok {
			return c
		}
	}
	L.ArgError(1, "conversation expected (call methods with a colon: conv:send{...})")
	return nil
}

// convUser implements conv:user(text): the user's next message.
func convUser(L *lua.LState) int {
	c := checkConversation(L)
	c.checkCallsAnswered(L, "conv:user")
	c.history = append(c.history, engine.Message{Role: "user", Content: L.CheckString(2)})
	return 0
}

// convTool implements conv:tool(call, content): the tool's answer to one
// of the assistant's calls, where call is the call's id or the call
// itself (an entry of the result's tool_calls). The context then grows as
// an agent's does: conv:send sends the history with the call and its
// answer. A call that the last answer did not make, or one answered
// already, is an error: a server refuses the history.
func convTool(L *lua.LState) int {
	c := checkConversation(L)
	var id string
	switch v := L.Get(2).(type) {
	case lua.LString:
		id = string(v)
	case *lua.LTable:
		s, ok := v.RawGetString("id").(lua.LString)
		if !ok {
			L.ArgError(2, "a tool call (an entry of the result's tool_calls) has a string id")
		}
		id = string(s)
	default:
		L.ArgError(2, "the tool call's id, or the call (an entry of the result's tool_calls), expected")
	}
	content := L.CheckString(3)
	calls, pending, _ := c.lastCalls()
	if calls == nil {
		L.RaiseError("conv:tool: the last answer made no tool call to answer")
	}
	if !pending[id] {
		ids := make([]string, len(calls))
		for k, tc := range calls {
			ids[k] = strconv.Quote(tc.ID)
		}
		L.RaiseError("conv:tool: the last answer made no unanswered call %q (its calls: %s)", id, strings.Join(ids, ", "))
	}
	c.history = append(c.history, engine.Message{Role: "tool", ToolCallID: id, Content: content})
	return 0
}

// lastCalls are the tool calls of the history's last answer, the ids
// among them that no tool message after it answers, and their ids in
// the calls' order; no calls when the last message other than the tools'
// answers is not an answer that made any.
func (c *conversation) lastCalls() (calls []engine.ToolCall, pending map[string]bool, pendingIDs []string) {
	i := len(c.history) - 1
	for i >= 0 && c.history[i].Role == "tool" {
		i--
	}
	if i < 0 || c.history[i].Role != "assistant" || len(c.history[i].ToolCalls) == 0 {
		return nil, nil, nil
	}
	calls = c.history[i].ToolCalls
	answered := map[string]bool{}
	for _, later := range c.history[i+1:] {
		answered[later.ToolCallID] = true
	}
	pending = map[string]bool{}
	for _, tc := range calls {
		if !answered[tc.ID] {
			pending[tc.ID] = true
			pendingIDs = append(pendingIDs, strconv.Quote(tc.ID))
		}
	}
	return calls, pending, pendingIDs
}

// checkCallsAnswered refuses to go on while a tool call of the last answer
// has no answer: a server refuses such a history.
func (c *conversation) checkCallsAnswered(L *lua.LState, name string) {
	if _, _, ids := c.lastCalls(); len(ids) > 0 {
		L.RaiseError("%s: the last answer's tool calls %s are not answered yet (conv:tool(call, content) first)", name, strings.Join(ids, ", "))
	}
}

// convFork implements conv:fork() -> conversation: a copy of the history
// so far, its tags and its turns, that then goes its own way — a
// sub-agent that shares its parent's prefix, which a server's prefix
// cache serves to both.
func (m *Module) convFork(L *lua.LState) int {
	c := checkConversation(L)
	f := &conversation{history: make([]engine.Message, len(c.history)), tags: maps.Clone(c.tags),
		turns: c.turns, source: c.source, cursor: c.cursor}
	for i, msg := range c.history {
		msg.ToolCalls = slices.Clone(msg.ToolCalls)
		f.history[i] = msg
	}
	ud := L.NewUserData()
	ud.Value = f
	L.SetMetatable(ud, m.conversationMetatable(L))
	L.Push(ud)
	return 1
}

// convReplayNext implements conv:replay_next() -> boolean: appends the
// source conversation's next user turn and returns true, or returns false
// when none is left (or there is no source).
func convReplayNext(L *lua.LState) int {
	c := checkConversation(L)
	c.checkCallsAnswered(L, "conv:replay_next")
	for ; c.cursor < len(c.source); c.cursor++ {
		if msg := c.source[c.cursor]; msg.Role == "user" || msg.Role == "human" {
			c.history = append(c.history, engine.Message{Role: "user", Content: msg.Content})
			c.cursor++
			L.Push(lua.LTrue)
			return 1
		}
	}
	L.Push(lua.LFalse)
	return 1
}

// convTurns implements conv:turns() -> number of completed turns.
func convTurns(L *lua.LState) int {
	L.Push(lua.LNumber(checkConversation(L).turns))
	return 1
}

// convMessages implements conv:messages() -> a copy of the history.
func convMessages(L *lua.LState) int {
	L.Push(messagesTable(L, checkConversation(L).history))
	return 1
}

// convSend implements conv:send{ max_tokens=?, ...llm.chat keys but
// messages... } -> result: sends the whole history through llm.chat's
// path, tagged turn = "<n>" (1-based) and with the conversation's tags,
// and on success appends the answer — its text and its tool calls, which
// conv:tool then answers — completing the turn. A failed turn leaves the
// history as it was, so the script may retry it or stop.
func (m *Module) convSend(L *lua.LState) int {
	c := checkConversation(L)
	c.checkCallsAnswered(L, "conv:send")
	if len(c.history) == 0 || (c.history[len(c.history)-1].Role != "user" && c.history[len(c.history)-1].Role != "tool") {
		L.RaiseError("conv:send: the last message is not the user's (call conv:user(text) or conv:replay_next() first) nor a tool's answer (conv:tool)")
	}
	opts := L.OptTable(2, L.CreateTable(0, 0))
	if opts.RawGetString("messages") != lua.LNil {
		L.RaiseError("conv:send: messages come from the conversation; use conv:user(text)")
	}
	turn := c.turns + 1
	build := func(tbl *lua.LTable) (*engine.ChatRequest, string, error) {
		req, kind, err := m.convFields("conv:send", tbl)
		if err == nil {
			req.Messages = append([]engine.Message(nil), c.history...)
			req.Tags = mergeTags(mergeTags(c.tags, req.Tags), map[string]string{"turn": strconv.Itoa(turn)})
		}
		return req, kind, err
	}
	if c.sending {
		L.RaiseError("conv:send: the conversation is already waiting for an answer (sent from another llm.parallel branch): give each branch its own, conv:fork() for a sub-agent")
	}
	c.sending = true
	sent := false
	defer func() {
		if !sent {
			c.sending = false // refused before it went out
		}
	}()
	n := m.sendRequest(L, "conv:send", opts, build, func(res *engine.Result) {
		c.sending = false
		if res.OK() {
			c.history = append(c.history, engine.Message{Role: "assistant", Content: res.Text, ToolCalls: slices.Clone(res.ToolCalls)})
			c.turns = turn
		}
	})
	sent = true
	return n
}
