-- vision_bench.lua — what does an image cost llmload itself?
--
-- What it answers: llmload's CPU and memory per request when every
-- request carries one 1024×1024 JPEG (about 400 KB of base64), against
-- the same load of text requests with as many prompt tokens (the
-- simulator's qwen2vl count for that image: 1,225). Every VU starts at once
-- and sends `requests` streamed requests back to back. The image is made
-- and encoded once per process, so a request only splices it into the
-- body: run both modes against the simulator in fixed-delay mode in another
-- process, each pinned to its own core, and compare the result files'
-- process CPU per request:
--
--   taskset -c 0 llmload mock --addr 127.0.0.1:18000 --fixed-ttft 50ms \
--       --fixed-itl 5ms --truth-log truth.jsonl &
--   taskset -c 1 llmload run scenarios/vision_bench.lua \
--       --target http://127.0.0.1:18000/v1 --set mode=image --out image.json
--   taskset -c 1 llmload run scenarios/vision_bench.lua \
--       --target http://127.0.0.1:18000/v1 --set mode=text --out text.json
--   kill %1; wait
--   llmload report image.json --truth truth.jsonl
--
-- `--set side=2048 --set quality=100` makes bodies of megabytes (5 MB at
-- 2048×2048, quality 100), whose upload is part of TTFT: the truth log
-- holds the server's TTFT from the arrival of the request's headers, so
-- `report --truth` gives llmload's error with the upload inside both.
--
-- mode is image or text.
--
-- Keys (--set): mode=image vus=64 requests=8 max_tokens=16 side=1024 quality=85 text_tokens=1225 max_duration=5m

local llm = require("llmload")

local mode = llm.param("mode", "image")
local side = llm.param("side", 1024)
local max_tokens = llm.param("max_tokens", 16)

options = {
  lints = { ignore = { ["no-warmup"] = "measures llmload at a cold start's burst: a warmup would open the connections first" } },
  scenarios = {
    requests = {
      executor = "per-vu-iterations",
      exec = "send",
      vus = llm.param("vus", 64),
      iterations = llm.param("requests", 8),
      max_duration = llm.param("max_duration", "5m"),
    },
  },
}

if mode ~= "image" and mode ~= "text" then
  error(("mode = %q: want image or text"):format(mode))
end

local image = llm.synthetic.image { width = side, height = side, format = "jpeg",
  quality = llm.param("quality", 85), variants = 1 }
-- Text of as many tokens as the image costs the simulator; a fresh
-- prefix per request keeps prefix caches out of it.
local filler = string.rep("word ", llm.param("text_tokens", 1225))

function send(vu)
  local head = ("[vu %d req %d] describe"):format(vu.id, vu.request_id)
  local content
  if mode == "image" then
    content = { { type = "text", text = head }, { type = "image", image = image } }
  else
    content = head .. " " .. filler
  end
  llm.chat { messages = { { role = "user", content = content } }, max_tokens = max_tokens }
end
