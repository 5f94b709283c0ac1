-- responses.lua — OpenAI's Responses API (POST /v1/responses) under load.
--
-- What it answers: how TTFT, TPOT and end-to-end latency of llm.respond
-- behave as concurrency grows, on a server or gateway that serves
-- /v1/responses (OpenAI, vLLM, SGLang, LiteLLM and other gateways). The
-- stream is typed events: response.output_text.delta carries the answer,
-- response.reasoning_text.delta and response.reasoning_summary_text.delta
-- a reasoning model's thinking, which counts for TTFT while TTFC waits for
-- the first answer text; output tokens come from response.completed's
-- usage. A response cut at max_output_tokens ends with response.incomplete
-- and finish_reason "length".
--
-- A server that speaks only chat completions fails the preflight with a
-- message saying so (HTTP 404 on /v1/responses), before any load.
--
-- Against a real server:
--
--   llmload run scenarios/responses.lua --target https://api.openai.com/v1 \
--       --model gpt-4.1-mini --set duration=2m
--
-- With no target it runs against the built-in simulator.
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
      exec = "respond",
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

function respond(vu)
  local res = llm.respond {
    instructions = "You are a concise assistant. Answer in a few sentences.",
    -- The unique prefix keeps the server's prefix cache from flattering TTFT.
    input = ("[req_%d] %s"):format(vu.request_id, prompts:next()),
    max_output_tokens = llm.param("max_tokens", 64),
    temperature = 0.7,
  }
  llm.check(res, {
    ["status 200"] = res.status == 200,
    ["answered with text"] = res.ok and res.text ~= "",
  })
end
