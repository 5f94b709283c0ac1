-- anthropic_messages.lua — Anthropic's Messages API (POST /v1/messages).
--
-- What it answers: TTFT, TPOT and end-to-end latency of llm.messages as
-- concurrency grows, against Anthropic's API or a gateway that speaks it
-- (LiteLLM, Bedrock or Vertex proxies, vLLM's Anthropic endpoint). The key
-- goes in x-api-key (never as a Bearer token) with anthropic-version
-- 2023-06-01. The stream's text_delta events carry the answer and
-- thinking_delta a model's extended thinking, which counts for TTFT but not
-- TTFC; input tokens come from message_start (cached prompt tokens
-- included), output tokens from message_delta. An overloaded server's
-- error event (overloaded_error) or HTTP 529 is counted as its own error
-- and said so in the summary.
--
-- Against Anthropic's API:
--
--   LLMLOAD_API_KEY=sk-ant-... llmload run scenarios/anthropic_messages.lua \
--       --target https://api.anthropic.com/v1 --model claude-sonnet-4-5 --set duration=2m
--
-- With no target it runs against the built-in simulator, which wants the
-- same headers.
--
-- Keys (--set): duration=4s max_tokens=64

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local prompts = llm.pool.text("data/short.txt")

options = {
  -- Before the first stage: a cold server's first answers are not measured.
  warmup = { requests = 4 },
  scenarios = {
    sweep = {
      executor = "ramping-vus",
      exec = "ask",
      stages = {
        { name = "c1", target = 1, duration = stage },
        { name = "c4", target = 4, duration = stage },
        { name = "c8", target = 8, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["checks"] = "rate > 0.99",
  },
}

function ask(vu)
  local res = llm.messages {
    system = "You are a concise assistant. Answer in a few sentences.",
    messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, prompts:next()) } },
    max_tokens = llm.param("max_tokens", 64),
    temperature = 0.7,
  }
  llm.check(res, {
    ["status 200"] = res.status == 200,
    ["answered with text"] = res.ok and res.text ~= "",
  })
end
