package api

import (
	"strconv"

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
		methods := L.SetFuncs(L.CreateTable(0, 5), map[string]lua.LGFunction{
			"user": convUser, "send": m.convSend, "turns": convTurns,
			"messages": convMessages, "replay_next": convReplayNext,
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
	c.history = append(c.history, engine.Message{Role: "user", Content: L.CheckString(2)})
	return 0
}

// convReplayNext implements conv:replay_next() -> boolean: appends the
// source conversation's next user turn and returns true, or returns false
// when none is left (or there is no source).
func convReplayNext(L *lua.LState) int {
	c := checkConversation(L)
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
// and on success appends the answer, completing the turn. A failed turn
// leaves the history as it was, so the script may retry it or stop.
func (m *Module) convSend(L *lua.LState) int {
	c := checkConversation(L)
	if len(c.history) == 0 || c.history[len(c.history)-1].Role != "user" {
		L.RaiseError("conv:send: the last message is not the user's (call conv:user(text) or conv:replay_next() first)")
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
	res := m.sendRequest(L, "conv:send", opts, build)
	if res.OK() {
		c.history = append(c.history, engine.Message{Role: "assistant", Content: res.Text})
		c.turns = turn
	}
	return 1
}
