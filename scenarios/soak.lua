-- soak.lua — does a long steady load stay steady, on both sides?
--
-- What it answers: whether the server's latency and errors hold over a
-- long run at a steady stream count (the HTML report's time series shows
-- a TTFT that creeps up), and whether llmload itself stays flat while it
-- measures: its resident set, live heap, goroutines and open files,
-- sampled every second, are compared early and late in the soak stage
-- after a warm-up (the summary's client self-check); growth over 10% is
-- flagged and warned about.
--
--   llmload mock --addr 127.0.0.1:18000 --fixed-ttft 200ms --fixed-itl 10ms &
--   llmload run scenarios/soak.lua --target http://127.0.0.1:18000/v1 --out soak.json
--   kill %1
--
-- Keys (--set): vus=200 duration=30m ramp=30s max_tokens=64 input_tokens=256

local llm = require("llmload")

local vus = llm.param("vus", 200)

local prompts = llm.synthetic {
  input_tokens = llm.dist.fixed(llm.param("input_tokens", 256)),
  output_tokens = llm.dist.fixed(llm.param("max_tokens", 64)),
  unique_prefix = true,
}

options = {
  warmup = { requests = 8 },
  scenarios = {
    soak = {
      executor = "ramping-vus", exec = "ask",
      stages = {
        -- The ramp opens the connections; the soak holds them.
        { name = "ramp", target = vus, duration = llm.param("ramp", "30s"), ramp = llm.param("ramp", "30s") },
        { name = "soak", target = vus, duration = llm.param("duration", "30m") },
      },
    },
  },
  thresholds = { checks = "rate > 0.99" },
}

function ask(vu)
  local p = prompts:next()
  local res = llm.chat {
    messages = { { role = "user", content = p.prompt } },
    max_tokens = p.max_tokens,
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
