package luabind

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
)

// requestHeadersScript calls every request function of the llm module
// with headers, and each with a bad header table.
const requestHeadersScript = `local llm = require("llmload")
options = { vus = 1, duration = "1s" }
function iteration(vu) end
local h = { ["X-Tenant"] = "acme", ["OpenAI-Project"] = "proj_1", Authorization = llm.env("REQ_AUTH", "Bearer per-request") }
local msgs = { { role = "user", content = "hi" } }
function chat() llm.chat { messages = msgs, headers = h } end
function complete() llm.complete { prompt = "hi", headers = h } end
function respond() llm.respond { input = "hi", headers = h } end
function messages() llm.messages { messages = msgs, max_tokens = 4, headers = h } end
function embed() llm.embed { input = "hi", headers = h } end
function conv() local c = llm.conversation {}; c:user("hi"); c:send { headers = h } end
function dirty() llm.chat { messages = msgs, headers = h, dirty = "empty" } end
function none() llm.chat { messages = msgs } end
function empty() llm.chat { messages = msgs, headers = {} } end

function bad_name() llm.chat { messages = msgs, headers = { ["Bad Name"] = "v" } } end
function bad_value() llm.chat { messages = msgs, headers = { ["X-Api-Key"] = "sk-leak\r\nX-Injected: 1" } } end
function owned() llm.complete { prompt = "hi", headers = { host = "evil.example" } } end
function number() llm.respond { input = "hi", headers = { ["X-Priority"] = 1 } } end
function twice() llm.messages { messages = msgs, max_tokens = 4, headers = { ["X-Tenant"] = "a", ["x-tenant"] = "b" } } end
function not_table() llm.embed { input = "hi", headers = "X-Tenant: a" } end
function list() llm.chat { messages = msgs, headers = { "X-Tenant: a" } } end
function conv_bad() local c = llm.conversation {}; c:user("hi"); c:send { headers = { ["X:Y"] = "v" } } end
`

func TestRequestHeaders(t *testing.T) {
	s := mustCompile(t, writeScript(t, "h.lua", requestHeadersScript), Options{})
	client := &fakeClient{result: engine.Result{Status: 200, Text: "ok"}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, 1)
	want := []engine.Header{{Name: "Authorization", Value: "Bearer per-request"}, {Name: "OpenAI-Project", Value: "proj_1"},
		{Name: "X-Tenant", Value: "acme"}}
	tests := []struct {
		exec string
		want []engine.Header
	}{
		{"chat", want}, {"complete", want}, {"respond", want}, {"messages", want}, {"embed", want}, {"conv", want},
		{"dirty", want}, {"none", nil}, {"empty", nil},
	}
	for _, tt := range tests {
		before := len(client.requests())
		if err := run(t, v, tt.exec); err != nil {
			t.Errorf("%s: %v", tt.exec, err)
			continue
		}
		reqs := client.requests()
		if len(reqs) != before+1 {
			t.Errorf("%s sent %d requests, want 1", tt.exec, len(reqs)-before)
			continue
		}
		if got := reqs[before].Headers; !slices.Equal(got, tt.want) {
			t.Errorf("%s: Headers = %v, want %v", tt.exec, got, tt.want)
		}
	}
}

func TestRequestHeadersErrors(t *testing.T) {
	s := mustCompile(t, writeScript(t, "h.lua", requestHeadersScript), Options{})
	client := &fakeClient{result: engine.Result{Status: 200, Text: "ok"}}
	v := newVU(t, s, api.RunnerConfig{Client: client, Sink: &fakeSink{}, Model: "m"}, 1)
	tests := map[string]string{
		"bad_name":  `llm.chat.headers["Bad Name"]: the name holds a space at position 4: a header name is a token`,
		"bad_value": `llm.chat.headers["X-Api-Key"]: the value holds a carriage return (CR) at position 8`,
		"owned":     `llm.complete.headers["host"]: llmload sets Host from the base URL`,
		"number":    `llm.respond.headers["X-Priority"]: expected string, got number (a header value is text: write it in quotes)`,
		"twice":     `llm.messages.headers["x-tenant"]: the same header as ["X-Tenant"] (header names are case-insensitive)`,
		"not_table": "llm.embed.headers: expected a table of header names to values, got string",
		"list":      "llm.chat.headers[1]: header names are strings, got number",
		"conv_bad":  `conv:send.headers["X:Y"]: the name holds a colon at position 2`,
	}
	for exec, want := range tests {
		err := run(t, v, exec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error = %v, want it to contain %q", exec, err, want)
			continue
		}
		if !strings.Contains(err.Error(), "h.lua:") {
			t.Errorf("%s: error = %q, want the script's line", exec, err)
		}
		if strings.Contains(err.Error(), "sk-leak") {
			t.Errorf("%s: error = %q quotes the value", exec, err)
		}
	}
	if n := len(client.requests()); n != 0 {
		t.Errorf("%d requests with bad headers reached the client", n)
	}
}
