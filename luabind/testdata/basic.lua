-- A valid scenario whose plan is checked against basic.plan.golden.
local llm = require("llmload")

local prompts = llm.pool { "alpha", "beta", "gamma" }

options = {
  target = { base_url = "http://127.0.0.1:1", api_key = "sk-test-never-printed", model = "m",
             connect_timeout = "1s", ttft_timeout = "5s", idle_timeout = "2s", timeout = "2m",
             tokenizer = "o200k_base", continuous_usage = true },
  slo = { ttft = "500ms", tpot = "50ms", e2e = "10s" },
  warmup = { requests = 2 },
  seed = 1234,
  scenarios = {
    sweep = { executor = "ramping-vus", exec = "chat", start_vus = 1,
              graceful_stop = "5s", graceful_ramp_down = "0s",
              stages = { { name = "c1", target = 1, duration = "1m" },
                         { target = 4, duration = "2m", ramp = "30s" },
                         { target = 0, duration = "10s", ramp = "10s" } },
              tags = { suite = "basic" } },
    steady = { executor = "constant-vus", exec = "chat", vus = 2, duration = "30s" },
  },
}

function chat(vu)
  local res = llm.chat {
    messages = { { role = "user", content = prompts:next() } },
    max_tokens = 16, temperature = 0, tags = { prompt = "short" },
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
