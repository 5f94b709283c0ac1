package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// simTool is a tool a request offers: its name and the parameter the
// simulated call fills, the first of its schema's properties by name
// ("input" when it has none).
type simTool struct{ name, arg string }

// Tool choices, in the Chat API's words; the Messages API's "any" is
// "required", and a named tool is required too.
const (
	choiceAuto     = "auto"
	choiceNone     = "none"
	choiceRequired = "required"
)

// toolChoice is whether a call must be made, and of which tool ("" for
// any).
type toolChoice struct{ mode, name string }

// toolPlan is the tool call an answer makes instead of text: the
// generated words go into the argument arg of tool name, as the JSON
// {"arg": "words"}.
type toolPlan struct{ id, name, arg string }

// planTool decides whether a request's answer is a tool call, and of
// which tool: never without tools or when the choice is none; always when
// it is required (the named tool, else the first); with auto, when the
// last message is a user's rather than a tool's answer, so that an agent
// loop plays out as call, result, answer. It is deterministic: the same
// request always gets the same call.
func planTool(tools []simTool, choice toolChoice, lastRole string, key uint64) (*toolPlan, *apiError) {
	if choice.mode == "" {
		choice.mode = choiceAuto
	}
	if len(tools) == 0 {
		if choice.mode == choiceRequired {
			return nil, badRequest("tool_choice", "tool_choice %s needs tools", quoteShort(choice.mode))
		}
		return nil, nil
	}
	call := choice.mode == choiceRequired || (choice.mode == choiceAuto && lastRole == openai.ChatMessageRoleUser)
	if !call {
		return nil, nil
	}
	t := tools[0]
	if choice.name != "" {
		i := slices.IndexFunc(tools, func(t simTool) bool { return t.name == choice.name })
		if i < 0 {
			return nil, badRequest("tool_choice", "tool_choice names the tool %s, which is not in tools", quoteShort(choice.name))
		}
		t = tools[i]
	}
	return &toolPlan{id: fmt.Sprintf("call_%016x", key), name: t.name, arg: t.arg}, nil
}

// piece is the arguments' text a chunk of generated text makes: the
// first opens the JSON object, the last closes it.
func (p *toolPlan) piece(text string, first, last bool) string {
	q, _ := json.Marshal(text) // a string always encodes
	s := string(q[1 : len(q)-1])
	if first {
		s = `{"` + p.arg + `": "` + strings.TrimLeft(s, " ")
	}
	if last {
		s += `"}`
	}
	return s
}

// overhead is the tokens of the JSON around the words: a real model
// generates them too, so usage counts them.
func (p *toolPlan) overhead() int {
	return CountTokens(`{"`+p.arg+`": "`) + CountTokens(`"}`)
}

// usageTokens is the output usage reports: the generated words, and the
// JSON around a tool call's.
func (c *completion) usageTokens() int {
	if c.tool == nil {
		return c.outputTokens
	}
	return c.outputTokens + c.tool.overhead()
}

// firstProperty is the first property of a JSON schema by name, "input"
// when it has none.
func firstProperty(schema any) string {
	raw, err := json.Marshal(schema)
	if err != nil {
		return "input"
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil || len(s.Properties) == 0 {
		return "input"
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[0]
}

// chatTools reads the tools and tool_choice of a chat request.
func chatTools(req *openai.ChatCompletionRequest) ([]simTool, toolChoice, *apiError) {
	var tools []simTool
	for i, t := range req.Tools {
		if t.Function == nil || t.Function.Name == "" {
			return nil, toolChoice{}, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d]: a function with a name is required", i)
		}
		tools = append(tools, simTool{name: t.Function.Name, arg: firstProperty(t.Function.Parameters)})
	}
	choice, aerr := openAIChoice(req.ToolChoice)
	return tools, choice, aerr
}

// openAIChoice reads a tool_choice of the Chat or Responses API: "auto",
// "none", "required", or an object naming a function ({"type":
// "function","function":{"name":...}}, or {"type":"function","name":...}).
func openAIChoice(v any) (toolChoice, *apiError) {
	switch c := v.(type) {
	case nil:
		return toolChoice{}, nil
	case string:
		if c != choiceAuto && c != choiceNone && c != choiceRequired {
			return toolChoice{}, badRequest("tool_choice", "tool_choice must be auto, none, required or a function, got %s", quoteShort(c))
		}
		return toolChoice{mode: c}, nil
	}
	raw, _ := json.Marshal(v)
	var obj struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) != nil || (obj.Name == "" && obj.Function.Name == "") {
		return toolChoice{}, badRequest("tool_choice", "tool_choice must be auto, none, required or name a function")
	}
	return toolChoice{mode: choiceRequired, name: obj.Name + obj.Function.Name}, nil
}

// lastRole is the role of a request's last message.
func lastRole(msgs []openai.ChatCompletionMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Role
}
