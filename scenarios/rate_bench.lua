-- rate_bench.lua — how fast can llmload itself schedule requests?
--
-- What it answers: the highest arrival rate llmload delivers on your
-- machine with its schedule lag (actual start − intended start) still
-- small. Run it against a server that answers instantly, so the server is
-- never the limit, in another process:
--
--   llmload mock --addr 127.0.0.1:18000 --max-batch 100000 --prefill-base -1ns \
--       --prefill-per-token -1ns --decode-base -1ns --decode-per-seq -1ns &
--   llmload run scenarios/rate_bench.lua --target http://127.0.0.1:18000/v1 --set rate=2000
--
-- Read the "arrivals" table: achieved/s against target/s, and lag p99.
-- llmload warns when lag p99 passes 10 ms or the achieved rate falls short.
--
-- Keys (--set): duration=10s rate=2000 arrival=constant

local llm = require("llmload")

options = {
  -- It measures llmload, not the server (a no-op mock): the practices the
  -- lints guard do not apply.
  lints = { ignore = {
    ["no-warmup"] = "measures llmload's own scheduling; the mock server has nothing to warm up",
    ["repeated-prefix"] = "measures llmload's own scheduling; the mock server has no prefix cache to flatter",
  } },
  scenarios = {
    bench = {
      executor = "constant-arrival-rate",
      exec = "ping",
      rate = llm.param("rate", 2000),
      duration = llm.param("duration", "10s"),
      arrival = llm.param("arrival", "constant"),
      pre_allocated_vus = 200,
      max_vus = 1000,
    },
  },
}

function ping(vu)
  llm.chat { messages = { { role = "user", content = "ping" } }, max_tokens = 2 }
end
