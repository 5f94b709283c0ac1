-- capacity.lua — how many requests per second the deployment takes before
-- it breaks its SLO.
--
-- What it answers: the highest arrival rate at which 95% of requests still
-- meet the SLO (first token within 500 ms, 50 ms per output token) and the
-- p99 TTFT stays under 1 s. The search doubles the rate from `start` until a
-- probe breaks the SLO (the bracket), then bisects between the highest rate
-- that held and the lowest that broke until they are within `precision` of
-- each other. Each probe warms up at its rate, then measures a window; a
-- probe whose samples cannot decide (a confidence interval straddling the
-- limit) is extended rather than judged on noise, and a probe where llmload
-- itself could not keep the schedule stops the search with that reason.
-- Between probes the load stops until the last probe's requests have ended
-- (and, with `metrics_url`, the server's queue is empty), so no probe
-- measures the backlog of the one before.
--
-- The answer, "capacity 11.8 req/s, between 11.3 and 12.2", is in the
-- summary, the result file (`capacity`) and the HTML report with every
-- probe, and gates CI through the `capacity.rate` threshold; `llmload compare`
-- fails a capacity drop of more than 10% (--max-capacity-drop).
--
--   llmload run scenarios/capacity.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set window=60s --set max=200
--
-- Keys (--set): arrival=poisson output_tokens=64 start=2 max=256 precision=5% probe_warmup=5s
-- Keys (--set): window=15s slo_ttft=500ms slo_tpot=50ms ttft_p95=1s capacity_rate=1
-- Keys (--set): metrics_url=""

local llm = require("llmload")

local prompts = llm.synthetic {
  input_tokens = llm.dist.normal(256, 32),
  output_tokens = llm.dist.fixed(llm.param("output_tokens", 64)),
  unique_prefix = true,
}

options = {
  target = {
    base_url = llm.env("LLMLOAD_BASE_URL"),
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL", "Qwen/Qwen2.5-7B-Instruct"),
    -- The server's own /metrics: between probes the search waits for its
    -- queue gauges to read zero, not only for llmload's requests to end.
    metrics_url = llm.param("metrics_url", ""),
  },
  slo = { ttft = llm.param("slo_ttft", "500ms"), tpot = llm.param("slo_tpot", "50ms") },
  scenarios = {
    search = {
      executor = "capacity",
      exec = "ask",
      load = "rate",
      start = llm.param("start", 2),
      max = llm.param("max", 256),
      precision = llm.param("precision", "5%"),
      warmup = llm.param("probe_warmup", "5s"),
      window = llm.param("window", "15s"),
      good_share = 0.95,
      conditions = { "ttft.p95 < " .. llm.param("ttft_p95", "1s") },
      arrival = llm.param("arrival", "poisson"),
      pre_allocated_vus = 16,
      max_vus = 512,
    },
  },
  thresholds = { ["capacity.rate"] = "> " .. llm.param("capacity_rate", 1) },
}

function ask(vu)
  local p = prompts:next()
  local res = llm.chat {
    messages = { { role = "user", content = p.prompt } },
    max_tokens = p.max_tokens, min_tokens = p.max_tokens, ignore_eos = true,
    temperature = 0.7, seed = llm.rand_int(),
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
