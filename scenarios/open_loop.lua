-- open_loop.lua — what users see when requests arrive at a fixed rate.
--
-- What it answers: at 1, 2, 4 and 6 requests per second, arriving whether
-- or not the server keeps up (an open model, like real traffic), how long do
-- users wait for the first token and for the whole answer? Unlike a closed
-- loop of N users, an open model shows queueing: once the arrival rate
-- passes the server's capacity, the queue — and TTFT — grow without bound.
--
-- Latencies are measured from each request's *intended* start as well as
-- from its actual send (ttft_sched, e2e_sched), so a generator that falls
-- behind cannot hide the wait (no coordinated omission); schedule_lag says
-- how far behind llmload itself was. An iteration that finds every VU busy
-- is dropped and counted (dropped_iterations), never silently delayed.
--
-- It gates on thresholds: the run exits 99 when one fails, so it can guard
-- a release in CI. The TTFT gate reads the median of stage r2: a
-- percentile needs ten requests beyond it (a p50 20, a p99 1,000), and r2
-- sends 20 in 10 s; for a tail gate, lengthen the stages (a p99 at 2 req/s
-- needs 8m20s) and gate on ttft_sched{stage:r2}.p99. Against a real server:
--
--   llmload run scenarios/open_loop.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=3m --set ttft_sched_p50=1s
--
-- Keys (--set): duration=10s arrival=poisson max_tokens=120 ttft_sched_p50=3s

local llm = require("llmload")

local stage = llm.param("duration", "10s")
local ttft_sched_p50 = llm.param("ttft_sched_p50", "3s")

local prompts = llm.pool {
  "什么是机器学习？",
  "Explain how a B-tree index speeds up database queries.",
  "请详细解释深度学习和传统机器学习的区别。",
  "Summarise the CAP theorem in three sentences.",
}

options = {
  warmup = { requests = 4 },
  scenarios = {
    open = {
      executor = "ramping-arrival-rate",
      exec = "ask",
      arrival = llm.param("arrival", "poisson"),
      pre_allocated_vus = 16,
      max_vus = 64,
      stages = {
        { name = "r1", target = 1, duration = stage },
        { name = "r2", target = 2, duration = stage },
        { name = "r4", target = 4, duration = stage },
        { name = "r6", target = 6, duration = stage },
      },
    },
  },
  thresholds = {
    ["ttft_sched{stage:r2}.p50"] = "< " .. ttft_sched_p50,
    ["errors.rate"] = "< 1%",
    checks = "rate > 0.99",
    dropped_iterations = "count < 10",
  },
}

function ask(vu)
  local res = llm.chat {
    messages = { { role = "user", content = ("[req_%d] %s"):format(vu.request_id, prompts:next()) } },
    max_tokens = llm.param("max_tokens", 120),
    temperature = 0.7,
    seed = llm.rand_int(),
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
