-- multi_turn.lua — does TTFT grow as a conversation's context grows?
--
-- What it answers: each virtual user holds a conversation of five turns
-- with think time between them, sending the whole history every turn, like
-- a chat UI. Turn 1 sends a short prompt; turn 5 sends everything said so
-- far. Every request is tagged turn=1..5, so the summary's per-tag table
-- shows each turn's latency on its own row instead of one blurred average.
-- A second scenario replays recorded ShareGPT-style conversations from
-- data/conversations.json turn by turn.
--
-- What to expect: without a prefix cache, prefill work — and TTFT — grows
-- with the turn. A server that caches prefixes (vLLM's automatic prefix
-- caching, SGLang's radix cache, and the built-in simulator by default)
-- prefills only each turn's new tokens, so turns 2-5 stay flat. Measured on
-- this project's 2-core machine with 8 s runs: the built-in simulator gives
-- TTFT p50 of about 30 ms on every turn from 2 to 5; `llmload mock
-- --prefix-cache -1` (no cache) gives 32, 39, 52 and 66 ms. Turn 1 is slower
-- in both because every VU starts at once. A flat curve on a real server
-- means its prefix cache works; a growing one, that it does not cache (or
-- that the conversation outgrew the cache).
--
-- Against a real server:
--
--   llmload run scenarios/multi_turn.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=5m
--
-- Keys (--set): duration=30s vus=4 replay_vus=2 max_tokens=96

local llm = require("llmload")

local openers = llm.pool.text("data/short.txt")
local recorded = llm.pool.sharegpt("data/conversations.json", { conversations = true })
local think = llm.think.between("500ms", "1500ms")

local follow_ups = {
  "Can you go into more detail?",
  "请举一个具体的例子。",
  "What would you do differently at ten times the scale?",
  "总结一下前面的要点。",
}

options = {
  -- Two whole conversations before the stage: a cold server's first
  -- answers are not measured.
  warmup = { requests = 2 },
  scenarios = {
    chat = {
      executor = "constant-vus",
      exec = "converse",
      vus = llm.param("vus", 4),
      duration = llm.param("duration", "30s"),
    },
    replay = {
      executor = "constant-vus",
      exec = "replay",
      vus = llm.param("replay_vus", 2),
      duration = llm.param("duration", "30s"),
    },
  },
}

function converse(vu)
  local conv = llm.conversation { system = "You are a helpful, concise assistant.", tags = { source = "synthetic" } }
  conv:user(("[req_%d] %s"):format(vu.request_id, openers:next()))
  for turn = 1, 5 do
    local res = conv:send { max_tokens = llm.param("max_tokens", 96), temperature = 0.7 }
    if not res.ok then
      return
    end
    if turn < 5 then
      think()
      conv:user(follow_ups[turn])
    end
  end
end

function replay(vu)
  -- The pool holds four conversations, replayed again and again: a unique
  -- system prompt keeps a later replay of one from hitting the prefix
  -- cache its first replay filled (which would flatter turn 1's TTFT).
  local conv = llm.conversation {
    system = ("[conv_%d] You are a helpful, concise assistant."):format(vu.request_id),
    messages = recorded:next(), tags = { source = "sharegpt" },
  }
  while conv:replay_next() do
    local res = conv:send { max_tokens = llm.param("max_tokens", 96) }
    if not res.ok then
      return
    end
    think()
  end
end
