-- llm.chat: request building and the result table.
local llm = require("llmload")

options = {
  scenarios = {
    s = { executor = "constant-vus", exec = "full", vus = 1, duration = "1s",
          tags = { suite = "chat", prompt = "scenario" } },
  },
}

local user = { { role = "user", content = "hi" } }

function full(vu)
  res = llm.chat {
    messages = { { role = "system", content = "be brief" }, { role = "user", content = "hi" } },
    model = "other", max_tokens = 5, temperature = 0, top_p = 0.9, seed = 42, stop = "END",
    extra = { top_k = 5, stream_options = { include_usage = true }, logit_bias = { ["50256"] = -100 },
              list = { 1, 2.5, "x" }, empty = {}, big = 2^40 },
    tags = { prompt = "short", n = 3 },
  }
end

function minimal(vu) res = llm.chat { messages = user } end
function stop_list(vu) llm.chat { messages = user, stop = { "a", "b" } } end
function typo(vu) llm.chat { messages = user, max_token = 5 } end
function no_messages(vu) llm.chat { model = "m" } end
function empty_messages(vu) llm.chat { messages = {} } end
function no_role(vu) llm.chat { messages = { { content = "x" } } } end
function message_typo(vu) llm.chat { messages = { { role = "user", contnet = "x" } } } end
function bad_temperature(vu) llm.chat { messages = user, temperature = "hot" } end
function bad_stop(vu) llm.chat { messages = user, stop = { "a", 1 } } end
function bad_extra(vu) llm.chat { messages = user, extra = { f = function() end } } end
function extra_list(vu) llm.chat { messages = user, extra = { 1, 2 } } end
function cyclic_extra(vu)
  local t = {}
  t.self = t
  llm.chat { messages = user, extra = { t = t } }
end
function not_a_table(vu) llm.chat("hi") end
function two(vu)
  llm.chat { messages = user }
  llm.chat { messages = user }
end

-- llm.complete and stream = false.
function complete_full(vu)
  res = llm.complete {
    prompt = "Once upon a time", model = "other", max_tokens = 7, temperature = 0.5, top_p = 1,
    seed = 9, stop = { "\n" }, extra = { echo = false }, tags = { prompt = "story" }, stream = false,
  }
end
function complete_minimal(vu) res = llm.complete { prompt = "" } end
function chat_no_stream(vu) llm.chat { messages = user, stream = false } end
function chat_stream(vu) llm.chat { messages = user, stream = true } end
function no_prompt(vu) llm.complete { max_tokens = 3 } end
function prompt_number(vu) llm.complete { prompt = 42 } end
function prompt_typo(vu) llm.complete { promt = "x" } end
function complete_messages(vu) llm.complete { prompt = "x", messages = user } end
function bad_stream(vu) llm.chat { messages = user, stream = "no" } end
function complete_bad_stream(vu) llm.complete { prompt = "x", stream = 0 } end
function complete_not_a_table(vu) llm.complete("x") end
