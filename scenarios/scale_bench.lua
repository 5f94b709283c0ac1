-- scale_bench.lua — how accurate and how cheap is llmload at many streams?
--
-- What it answers: llmload's own error (its TTFT, TPOT and E2E less the
-- server's figures for the same requests) and its CPU per streamed token,
-- at a stream count you choose. Every VU starts at once (the burst a stage
-- start makes) and sends `requests` streamed requests back to back. Run it
-- against the simulator in fixed-delay mode in another process, each pinned
-- to its own core, with the server logging its own timings:
--
--   taskset -c 0 llmload mock --addr 127.0.0.1:18000 --fixed-ttft 200ms \
--       --fixed-itl 10ms --truth-log truth.jsonl &
--   taskset -c 1 llmload run scenarios/scale_bench.lua \
--       --target http://127.0.0.1:18000/v1 --set vus=1024 --out scale.json
--   kill %1; wait
--   llmload report scale.json --truth truth.jsonl
--
-- The last command prints llmload's figure, the server's and the error per
-- percentile, and the CPU llmload spent per output token.
--
-- Keys (--set): vus=64 requests=4 max_tokens=64 max_duration=5m

local llm = require("llmload")

options = {
  -- The burst of a cold start is what it measures: a warmup would open
  -- the connections before it.
  lints = { ignore = {
    ["no-warmup"] = "measures llmload at a cold start's burst: a warmup would open the connections first",
    ["start-burst"] = "the burst of every VU starting at once is what it measures",
  } },
  scenarios = {
    streams = {
      executor = "per-vu-iterations",
      exec = "stream",
      vus = llm.param("vus", 64),
      iterations = llm.param("requests", 4),
      max_duration = llm.param("max_duration", "5m"),
    },
  },
}

local max_tokens = llm.param("max_tokens", 64)

function stream(vu)
  llm.chat {
    messages = { { role = "user", content = ("[vu %d req %d] count to a hundred"):format(vu.id, vu.request_id) } },
    max_tokens = max_tokens,
  }
end
