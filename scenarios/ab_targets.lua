-- ab_targets.lua — two deployments side by side in one run (an A/B), or
-- N replicas of one, with every figure per target.
--
-- What it answers: is deployment B as fast as A under the same load, at
-- the same moment? Both sides see one plan, one seed and the same prompts,
-- so a difference is the deployments', not the day's. The summary's "by
-- target" table, the HTML, the CSV and the result JSON (by_target of each
-- stage) give each target's requests, rates, goodput, TTFT, TPOT, E2E and
-- errors; `llmload compare --targets a,b result.json` gates B against A
-- with the exact tests of a two-file compare.
--
-- Without A_BASE_URL and B_BASE_URL each target gets a built-in simulator
-- of its own. Against real servers:
--
--   A_BASE_URL=http://10.0.0.1:8000/v1 B_BASE_URL=http://10.0.0.2:8000/v1 \
--       llmload run scenarios/ab_targets.lua --set vus=8 --set duration=1m
--
-- The load is spread by options.balance: "round_robin" (the default: in
-- turn), "weighted" (by each target's weight, exactly, interleaved) or
-- "random" (by weight, seeded by the run's seed). A request can name its
-- target (llm.chat { target = "b", ... }), and so can a scenario
-- (scenarios.x.target = "b"). Keys a target does not set are
-- options.target's.
--
-- Keys (--set): vus=4 duration=3s max_tokens=64

local llm = require("llmload")

local vus = tonumber(llm.param("vus", "4"))
local stage = llm.param("duration", "3s")
local max_tokens = tonumber(llm.param("max_tokens", "64"))
local prompts = llm.pool.text("data/short.txt")

options = {
  -- What both targets share.
  target = {
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL"),
  },
  targets = {
    a = { base_url = llm.env("A_BASE_URL") },
    b = { base_url = llm.env("B_BASE_URL") },
  },
  balance = "round_robin",
  warmup = { requests = 4 },
  scenarios = {
    ab = {
      executor = "ramping-vus",
      exec = "ask",
      stages = {
        { name = "c" .. vus, target = vus, duration = stage },
        { name = "c" .. (2 * vus), target = 2 * vus, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    -- Each side must hold its own, not only the two blended (a p50: a
    -- few seconds of load give a p99 nothing to stand on).
    ["ttft{target:a}.p50"] = "< 2s",
    ["ttft{target:b}.p50"] = "< 2s",
  },
}

function ask(vu)
  local res = llm.chat {
    -- A unique head per request: both sides' prefix caches see the same
    -- traffic, and neither serves it from a hit the other had.
    messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, prompts:next()) } },
    max_tokens = max_tokens,
  }
  llm.check(res, { ["status 200"] = res.ok })
end
