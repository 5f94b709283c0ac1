-- Data pools, synthetic prompts, conversations and dirty data.
local llm = require("llmload")

options = {
  target = { tokenizer = "cl100k_base" },
  vus = 1, duration = "1s",
  dirty = { ratio = llm.param("dirty", 0), kinds = { empty = 1, overlong = 3 } },
}

local text = llm.pool.text("data/prompts.txt")
local short = llm.pool.text("data/prompts.txt", { max_tokens = 8 })
local jsonl = llm.pool.jsonl("data/prompts.jsonl", { field = "q" })
local firsts = llm.pool.sharegpt("data/sharegpt.json")
local convs = llm.pool.sharegpt("data/sharegpt.json", { conversations = true })
local csv = llm.pool.csv("data/prompts.csv")
local inline = llm.pool { "x", "y" }

local gen = llm.synthetic {
  input_tokens = llm.dist.uniform(20, 40), output_tokens = llm.dist.fixed(16),
  prefix_tokens = 10, unique_prefix = true,
}
local plain = llm.synthetic { input_tokens = llm.dist.normal(30, 5), output_tokens = llm.dist.lognormal(50, 10) }

function iteration(vu) end

function pools(vu)
  out = { text = text:next(), text_len = text:len(), short_len = short:len(), jsonl = jsonl:next(),
          first = firsts:next(), csv = csv:next(), inline = inline:next(), conv = convs:next(),
          random = text:random() }
end

function synthetic(vu)
  local p = gen:next()
  out = { prompt = p.prompt, input_tokens = p.input_tokens, max_tokens = p.max_tokens, plain = plain:next().prompt,
          dist = tostring(llm.dist.normal(30, 5)) }
  llm.chat { messages = { { role = "user", content = p.prompt } }, max_tokens = p.max_tokens,
             ignore_eos = true, min_tokens = p.max_tokens }
end

function chat_many(vu)
  for i = 1, 200 do
    llm.chat { messages = { { role = "user", content = "hi" } }, max_tokens = 5 }
  end
end

function forced(vu)
  llm.chat { messages = { { role = "user", content = "hi" } }, dirty = "malformed_json", tags = { k = "v" } }
  llm.complete(llm.dirty.apply("overlong", { prompt = "p" }))
end

function kinds(vu) out = { kinds = llm.dirty.kinds() } end

function conversation(vu)
  local conv = llm.conversation { system = "be brief", tags = { flow = "chat" } }
  conv:user("hello")
  local r1 = conv:send { max_tokens = 10 }
  conv:user("and then?")
  local r2 = conv:send { max_tokens = 10, tags = { extra = "1" } }
  out = { turns = conv:turns(), messages = conv:messages(), ok = r1.ok and r2.ok }
end

function replay(vu)
  local conv = llm.conversation { messages = convs:next() }
  local n = 0
  while conv:replay_next() do
    conv:send { max_tokens = 10 }
    n = n + 1
  end
  out = { sent = n, turns = conv:turns(), messages = conv:messages() }
end

function send_without_user(vu) llm.conversation { system = "x" }:send {} end
function send_with_messages(vu)
  local c = llm.conversation {}
  c:user("x")
  c:send { messages = {} }
end
function conversation_typo(vu) llm.conversation { sytem = "x" } end
function bad_forced(vu) llm.chat { messages = { { role = "user", content = "hi" } }, dirty = "emtpy" } end
function bad_apply(vu) llm.dirty.apply("nope", {}) end
function bad_min_tokens(vu) llm.chat { messages = { { role = "user", content = "hi" } }, min_tokens = -1 } end
function bad_ignore_eos(vu) llm.chat { messages = { { role = "user", content = "hi" } }, ignore_eos = 1 } end
function synthetic_no_input(vu) llm.synthetic { output_tokens = llm.dist.fixed(1) } end
function synthetic_not_dist(vu) llm.synthetic { input_tokens = 5, output_tokens = llm.dist.fixed(1) } end
function synthetic_dot_call(vu) gen.next() end
function forced_chat_only(vu) llm.complete { prompt = "p", dirty = "no_messages" } end

-- An agent's turn: the answer calls a tool, the tool's answer goes back,
-- and a sub-agent forks off the shared history.
function agent(vu)
  local conv = llm.conversation { system = "agent", tags = { flow = "agent" } }
  conv:user("weather?")
  local r1 = conv:send { max_tokens = 10, tools = { { type = "function", ["function"] = { name = "get_weather" } } }, tool_choice = "auto" }
  conv:tool(r1.tool_calls[1], '{"t": 21}')
  local sub = conv:fork()
  sub:user("and tomorrow?")
  local r2 = conv:send { max_tokens = 10 }
  conv:tool("call_1", "again")
  out = { turns = conv:turns(), sub_turns = sub:turns(), sub_messages = sub:messages(), messages = conv:messages(), ok = r1.ok and r2.ok }
end
function tool_unknown_call(vu)
  local c = llm.conversation {}
  c:user("x")
  c:send {}
  c:tool("nope", "x")
end
function tool_twice(vu)
  local c = llm.conversation {}
  c:user("x")
  c:send {}
  c:tool("call_1", "x")
  c:tool("call_1", "y")
end
function tool_without_call(vu)
  local c = llm.conversation {}
  c:user("x")
  c:tool("call_1", "x")
end
function user_before_tool_answer(vu)
  local c = llm.conversation {}
  c:user("x")
  c:send {}
  c:user("y")
end
function tool_bad_call(vu)
  local c = llm.conversation {}
  c:user("x")
  c:send {}
  c:tool({ name = "f" }, "x")
end
