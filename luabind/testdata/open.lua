-- A valid scenario using every executor, thresholds and custom metrics;
-- its plan is checked against open.plan.golden.
local llm = require("llmload")

local tokens = llm.metric.trend("tokens_per_request")
local refusals = llm.metric.counter("refusals")
local long = llm.metric.rate("long_answers")

options = {
  seed = 7,
  scenarios = {
    steady = { executor = "constant-arrival-rate", exec = "chat", rate = 2, duration = "1m",
               pre_allocated_vus = 4, max_vus = 16, tags = { model = "small" } },
    sweep = { executor = "ramping-arrival-rate", exec = "chat", start_rate = 0.5, time_unit = "1s",
              pre_allocated_vus = 8, max_vus = 64, arrival = "gamma", burstiness = 0.5,
              stages = { { name = "r1", target = 1, duration = "1m" },
                         { name = "r4", target = 4, duration = "1m", ramp = "20s" } } },
    batch = { executor = "shared-iterations", exec = "chat", vus = 2, iterations = 20,
              max_duration = "5m", start_time = "1m", env = { PROMPT = "batch" } },
    each = { executor = "per-vu-iterations", exec = "chat", vus = 3, iterations = 2 },
  },
  thresholds = {
    ["ttft.p99"] = "< 1s",
    ["errors.rate"] = "< 1%",
    ["ttft{stage:r4}.p99"] = { "< 800ms", abort_on_fail = true, delay_abort_eval = "30s" },
    ["e2e{scenario:steady}"] = { "p95 < 2s", "max < 10s" },
    checks = "rate > 0.99",
    dropped_iterations = "count < 10",
    ["tokens_per_request.avg"] = "< 500",
  },
}

function chat(vu)
  local res = llm.chat { messages = { { role = "user", content = llm.env("PROMPT", "hi") } } }
  tokens:add(res.output_tokens)
  refusals:add(res.finish_reason == "content_filter" and 1 or 0)
  long:add(res.output_tokens > 100)
  llm.check(res, { ["status 200"] = res.status == 200 })
end
