-- robustness.lua — does the server survive what real users send?
--
-- What it answers: under ordinary chat traffic, how does the server treat
-- malformed input — empty messages, whitespace, invisible and bidi
-- characters, control characters, astral-plane emoji and rare CJK,
-- 2,000,000-character pastes, bad roles, absurd or negative max_tokens,
-- unknown models, broken or non-JSON bodies, invalid UTF-8, deep nesting?
-- 10% of requests are replaced by such a variant (tagged dirty=<kind>);
-- they never enter the clean latency percentiles. The summary has a
-- robustness table per stage: a clean 4xx with an error body is "handled",
-- a 200 "accepted" (some inputs are fine to serve), and a 5xx, timeout,
-- reset connection or hang a server DEFECT. The run fails (exit 99) on any
-- defect, so it can guard a release in CI.
--
-- On the built-in simulator every kind is handled or accepted; to see
-- defects reported, make the simulator mishandle some kinds:
--
--   llmload mock --addr 127.0.0.1:8000 --defect overlong=500 --defect bad_role=hang &
--   llmload run scenarios/robustness.lua --target http://127.0.0.1:8000/v1
--
-- Against a real server:
--
--   llmload run scenarios/robustness.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=2m
--
-- Keys (--set): duration=20s vus=4 max_tokens=64 dirty_ratio=0.10 ttft_timeout=20s

local llm = require("llmload")

local short = llm.pool.text("data/short.txt")
local medium = llm.pool.jsonl("data/medium.jsonl", { field = "prompt" })

options = {
  target = { ttft_timeout = llm.param("ttft_timeout", "20s"), idle_timeout = "20s" },
  dirty = { ratio = llm.param("dirty_ratio", 0.10) },
  -- Before the stage: a cold server's first answers are not measured.
  warmup = { requests = 4 },
  scenarios = {
    mix = {
      executor = "constant-vus",
      exec = "chat",
      vus = llm.param("vus", 4),
      duration = llm.param("duration", "20s"),
    },
  },
  thresholds = {
    ["dirty.defects"] = "count == 0",
    ["errors.rate"] = "< 1%", -- clean requests only: dirty ones are judged in the robustness table
  },
}

function chat(vu)
  local pool = llm.weighted { short = 1, medium = 1 } == "short" and short or medium
  llm.chat {
    messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, pool:next()) } },
    max_tokens = llm.param("max_tokens", 64),
    temperature = 0.7,
  }
end
