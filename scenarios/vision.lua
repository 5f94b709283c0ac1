-- vision.lua — a vision-language model by image resolution and images per prompt.
--
-- What it answers: how TTFT and throughput of a vision model (Qwen2.5-VL,
-- Llama 4, Gemma 3, LLaVA) behave as concurrency grows (1, 4, 8 users) when
-- every request carries images: images/s, request MB/s, the input tokens
-- each image costs (from the server's usage: a vision model counts image
-- tokens in prompt_tokens), and the client's encode and upload times.
--
-- Traffic: synthetic JPEGs drawn from resolution buckets, as vLLM's
-- random-mm dataset does — mostly 512×512, some 1024×1024, a few 256×256 —
-- one or two images a prompt (tagged images=1 or 2), each with a short
-- question under a unique "[req_N]" prefix, put before the images. Images are made once per
-- process from the run seed (8 distinct ones per bucket) and shared by
-- every user, so the client encodes nothing per request: what TTFT shows is
-- the server's prefill of the image tokens plus the upload of the body.
--
-- Against a real server, e.g. vllm serve Qwen/Qwen2.5-VL-3B-Instruct:
--
--   llmload run scenarios/vision.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-VL-3B-Instruct --set duration=1m
--
-- With no target it runs against llmload's built-in simulator.
--
-- Keys (--set): duration=4s max_tokens=64

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local max_tokens = llm.param("max_tokens", 64)

-- The resolution buckets and their weights.
local sizes = llm.dist.choice { { 512, 512 }, { 1024, 1024 }, { 256, 256 }, weights = { 6, 3, 1 } }
local images = llm.synthetic.image { size = sizes, format = "jpeg", quality = 85, variants = 8 }

local questions = llm.pool {
  "What is in this picture?",
  "Describe the colours and shapes you see.",
  "Is there any text in the image? Quote it.",
  "Count the distinct regions of colour.",
}

options = {
  target = {
    base_url = llm.env("LLMLOAD_BASE_URL"),
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL"),
  },
  warmup = { requests = 4 },
  scenarios = {
    ramp = {
      executor = "ramping-vus",
      exec = "describe",
      stages = {
        { name = "c1", target = 1, duration = stage },
        { name = "c4", target = 4, duration = stage },
        { name = "c8", target = 8, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["checks"] = "rate > 0.99",
  },
}

function describe(vu)
  local n = llm.weighted { one = 3, two = 1 } == "two" and 2 or 1
  local res = llm.chat {
    messages = {
      { role = "user", content = {
        -- The unique text first: a server's prefix cache keys images too,
        -- and would serve repeated images at the head of the prompt.
        { type = "text", text = ("[req_%d] %s"):format(vu.request_id, questions:next()) },
        { type = "image", image = images, count = n },
      } },
    },
    max_tokens = max_tokens,
    tags = { images = tostring(n) },
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
