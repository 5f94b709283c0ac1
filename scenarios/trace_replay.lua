-- trace_replay.lua — what *your* traffic does to a deployment.
--
-- What it answers: replaying a production trace at its own pace (or faster),
-- with each request's real prompt and answer lengths and the prompt-prefix
-- sharing the trace records, how long do users wait for the first token,
-- and how much of the prompts does the server's prefix cache serve?
--
-- The trace is Mooncake's format (JSONL: timestamp in ms, input_length,
-- output_length, hash_ids), as vLLM's bench serve, SGLang and AIPerf read
-- it; llm.trace.azure, .bailian, .jsonl and .csv read other traces. Each
-- record's timestamp becomes its intended start (an open model: latencies
-- are also measured from it, drops at max_vus are counted); its prompt is
-- built to exactly input_length tokens in the scenario's tokenizer, block by
-- block from its hash_ids, so records with equal leading ids send identical
-- prompt prefixes and different ids different ones; output_length becomes
-- max_tokens, with ignore_eos and min_tokens so the server generates exactly
-- that many. The data file is a trace of our own making: 200 requests over
-- 4 s with 16-token blocks, shared system prompts and multi-turn sessions.
--
-- Against a real server (completions API: the prompt's token count is
-- exactly the trace's; llm.chat would add the chat template's tokens):
--
--   llmload run scenarios/trace_replay.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set speedup=2
--
-- Keys (--set): speedup=1 limit=0 pre_allocated_vus=32 ttft_sched_p95=3s

local llm = require("llmload")

local trace = llm.trace.mooncake("data/trace_mooncake.jsonl", { block_tokens = 16 })

options = {
  target = {
    base_url = llm.env("LLMLOAD_BASE_URL"),
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL", "Qwen/Qwen2.5-7B-Instruct"),
    metrics_url = llm.env("LLMLOAD_METRICS_URL"),
  },
  scenarios = {
    replay = {
      executor = "trace",
      exec = "replay",
      trace = trace,
      speedup = llm.param("speedup", 1),
      limit = llm.param("limit", 0) > 0 and llm.param("limit", 0) or nil,
      pre_allocated_vus = llm.param("pre_allocated_vus", 32),
      max_vus = 256,
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    -- 200 records give a p95 its 200 requests; a p99 needs 1,000.
    ["ttft_sched.p95"] = "< " .. llm.param("ttft_sched_p95", "3s"),
  },
}

function replay(vu)
  local r = vu.record
  local res = llm.complete {
    prompt = r.prompt,
    max_tokens = r.max_tokens,
    min_tokens = r.max_tokens,
    ignore_eos = true,
    temperature = 0.7,
    seed = llm.rand_int(),
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
