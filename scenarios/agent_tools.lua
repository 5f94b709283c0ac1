-- agent_tools.lua — an agent's tool-calling turns over chat completions.
--
-- What it answers: how fast a model decides to call a tool and how fast it
-- answers once the tool's result is back, as concurrency grows. Each
-- iteration is one agent step of two requests: the user's question with a
-- get_weather tool (tool_choice "auto"), answered with a tool call, then the
-- same conversation with the call and the tool's result, answered with
-- text. Requests are tagged step=call and step=answer, so the per-tag table
-- shows both apart.
--
-- A tool call's first token is its first argument piece: the delta that
-- only names the call (id, function name) carries no generated argument,
-- so TTFT waits for the arguments, as a user waits for the call to run.
-- The call's arguments are output tokens (the server's usage, else the
-- offline tokenizer over them).
--
-- Against a real server (vLLM needs --enable-auto-tool-choice and a
-- --tool-call-parser for the model):
--
--   llmload run scenarios/agent_tools.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=2m
--
-- The built-in simulator calls a tool when tools are given and the user
-- spoke last, and answers in text after a tool's result.
--
-- Keys (--set): duration=4s max_tokens=48

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local cities = llm.pool { "Paris", "北京", "São Paulo", "Nairobi", "Toronto", "Mumbai" }

local weather = {
  type = "function",
  ["function"] = {
    name = "get_weather",
    description = "The current weather in a city.",
    parameters = {
      type = "object",
      properties = { city = { type = "string", description = "The city's name." } },
      required = { "city" },
    },
  },
}

options = {
  -- A few agent steps before the first stage: the server's first requests
  -- (cold caches, new connections) are not measured.
  warmup = { requests = 4 },
  scenarios = {
    agent = {
      executor = "ramping-vus",
      exec = "step",
      stages = {
        { name = "c1", target = 1, duration = stage },
        { name = "c4", target = 4, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["checks"] = "rate > 0.99",
  },
}

function step(vu)
  local msgs = {
    { role = "system", content = "You are a weather assistant. Use the tool to look the weather up." },
    { role = "user", content = ("[req_%d] What is the weather in %s?"):format(vu.request_id, cities:next()) },
  }
  local call = llm.chat { messages = msgs, tools = { weather }, tool_choice = "auto",
                          max_tokens = llm.param("max_tokens", 48), tags = { step = "call" } }
  local called = call.ok and call.tool_calls ~= nil
  llm.check(call, { ["a tool call"] = called })
  if not called then
    return
  end
  msgs[#msgs + 1] = { role = "assistant", tool_calls = call.tool_calls }
  for _, c in ipairs(call.tool_calls) do
    msgs[#msgs + 1] = { role = "tool", tool_call_id = c.id, content = '{"temperature_c": 21, "sky": "clear"}' }
  end
  local answer = llm.chat { messages = msgs, tools = { weather }, max_tokens = llm.param("max_tokens", 48),
                            tags = { step = "answer" } }
  llm.check(answer, { ["an answer in text"] = answer.ok and answer.text ~= "" and answer.tool_calls == nil })
end
