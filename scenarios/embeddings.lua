-- embeddings.lua — an embedding endpoint (POST /v1/embeddings) by batch size.
--
-- What it answers: how many inputs per second an embedding server sustains,
-- and at what latency, as each request carries more inputs: the stages send
-- 1, 8 and 32 inputs per request from 4 users each. An embeddings request
-- is never streamed, so its only latency is end to end; the summary shows
-- E2E, inputs/s and input tokens/s (the server's usage.prompt_tokens, else
-- the offline tokenizer), and no TTFT or TPOT rows for a stage that sent
-- only embeddings.
--
-- Dirty-data kinds malform generation requests, so llm.embed refuses
-- them, and options.dirty leaves embeddings clean.
--
-- Against a real server (vLLM serves embeddings for an embedding model,
-- e.g. vllm serve BAAI/bge-m3 --runner pooling):
--
--   llmload run scenarios/embeddings.lua --target http://127.0.0.1:8000/v1 \
--       --model BAAI/bge-m3 --set duration=1m
--
-- Keys (--set): duration=3s

local llm = require("llmload")

local stage = llm.param("duration", "3s")
local texts = llm.pool.text("data/short.txt")
local batch = { b1 = 1, b8 = 8, b32 = 32 }

options = {
  -- Before the first stage (with one input each): a cold server's first
  -- answers are not measured.
  warmup = { requests = 4 },
  scenarios = {
    batches = {
      executor = "ramping-vus",
      exec = "embed",
      stages = {
        { name = "b1", target = 4, duration = stage },
        { name = "b8", target = 4, duration = stage },
        { name = "b32", target = 4, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["checks"] = "rate > 0.99",
  },
}

function embed(vu)
  local n = batch[vu.stage] or 1
  local input = {}
  for i = 1, n do
    input[i] = ("[doc_%d_%d] %s"):format(vu.request_id, i, texts:next())
  end
  local res = llm.embed { input = input }
  llm.check(res, { ["one vector per input"] = res.ok and res.inputs == n })
end
