-- shared_prefix.lua — how much does the prefix cache save?
--
-- What it answers: the same load twice, side by side in one report. In
-- scenario "hit" every prompt starts with the same 1,000-token prefix (a
-- long system prompt or RAG context, as many applications send), so a
-- server with prefix caching skips most of the prefill and TTFT drops. In
-- scenario "miss" every prompt starts with a unique "[req_N]" marker, which
-- defeats the cache: the prefill is paid in full. Compare the TTFT rows of
-- the two stages. Prompts are synthetic, of exact token lengths, so the two
-- scenarios send the same amount of work.
--
-- The built-in simulator models a prefix cache, so the difference shows
-- without a GPU. Against a real server (vLLM: --enable-prefix-caching):
--
--   llmload run scenarios/shared_prefix.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=2m
--
-- Keys (--set): duration=15s

local llm = require("llmload")

local duration = llm.param("duration", "15s")

local shared = llm.synthetic {
  input_tokens = llm.dist.fixed(1200),
  output_tokens = llm.dist.fixed(32),
  prefix_tokens = 1000,
}
local unique = llm.synthetic {
  input_tokens = llm.dist.fixed(1200),
  output_tokens = llm.dist.fixed(32),
  unique_prefix = true,
}

options = {
  -- The warmup runs "hit" (the first scenario by name), so the shared
  -- prefix is in the cache before either scenario is measured.
  warmup = { requests = 2 },
  -- "hit" repeats its prefix on purpose: the lint that guards other
  -- scenarios against prefix-cache hits does not apply here.
  lints = { ignore = { ["repeated-prefix"] = "scenario hit shares a 1,000-token prefix on purpose: it measures the prefix cache" } },
  scenarios = {
    hit = { executor = "constant-vus", exec = "hit", vus = 2, duration = duration },
    miss = { executor = "constant-vus", exec = "miss", vus = 2, duration = duration, start_time = duration },
  },
}

local function send(gen, cache)
  local p = gen:next()
  llm.chat {
    messages = { { role = "user", content = p.prompt } },
    max_tokens = p.max_tokens,
    ignore_eos = true,
    tags = { cache = cache },
  }
end

function hit(vu)
  send(shared, "hit")
end

function miss(vu)
  send(unique, "miss")
end
