-- llm.respond, llm.messages, llm.embed and tools in llm.chat.
local llm = require("llmload")

options = {
  scenarios = {
    s = { executor = "constant-vus", exec = "respond_full", vus = 1, duration = "1s" },
  },
}

local user = { { role = "user", content = "hi" } }
local weather = { type = "function", ["function"] = { name = "get_weather",
  parameters = { type = "object", properties = { city = { type = "string" } } } } }

function respond_full(vu)
  res = llm.respond {
    input = "hi", instructions = "Be brief.", max_output_tokens = 20, model = "other", temperature = 0,
    top_p = 0.5, tools = { { type = "function", name = "f" } }, tool_choice = "auto",
    extra = { reasoning = { effort = "low" } }, tags = { kind = "r" }, stream = false,
  }
end
function respond_messages(vu) res = llm.respond { input = user } end
function respond_no_input(vu) llm.respond { max_output_tokens = 3 } end
function respond_max_tokens(vu) llm.respond { input = "x", max_tokens = 3 } end
function respond_seed(vu) llm.respond { input = "x", seed = 3 } end

function messages_full(vu)
  res = llm.messages {
    messages = user, system = "Be brief.", max_tokens = 64, stop = { "END" }, temperature = 0.2,
    tools = { { name = "f", input_schema = { type = "object" } } }, tool_choice = { type = "any" },
  }
end
function messages_no_max(vu) llm.messages { messages = user } end
function messages_dirty(vu) llm.messages { messages = user, max_tokens = 8, dirty = "bad_role" } end

function embed_one(vu) res = llm.embed { input = "hello" } end
function embed_many(vu)
  res = llm.embed { input = { "a", "b" }, dimensions = 64, encoding_format = "base64", model = "emb", tags = { k = "v" } }
end
function embed_empty(vu) llm.embed { input = {} } end
function embed_dirty(vu) llm.embed { input = "x", dirty = "empty" } end
function embed_stream(vu) llm.embed { input = "x", stream = true } end

-- An agent turn: the call the model made goes back with the tool's answer.
function agent(vu)
  local msgs = { { role = "user", content = "Weather in Paris?" } }
  local first = llm.chat { messages = msgs, tools = { weather }, tool_choice = "required" }
  out = { calls = first.tool_calls, api = first.api }
  msgs[#msgs + 1] = { role = "assistant", tool_calls = first.tool_calls }
  msgs[#msgs + 1] = { role = "tool", tool_call_id = first.tool_calls[1].id, content = "sunny" }
  llm.chat { messages = msgs, tools = { weather } }
end
function tool_call_no_id(vu) llm.chat { messages = { { role = "assistant", tool_calls = { { name = "f" } } } } } end
function tools_not_list(vu) llm.chat { messages = user, tools = "f" } end
