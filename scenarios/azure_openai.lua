-- azure_openai.lua — an Azure OpenAI deployment under a concurrency sweep.
--
-- What it answers: how TTFT, TPOT and end-to-end latency of one Azure
-- OpenAI deployment behave at 1, 4 and 8 concurrent users — where a
-- provisioned (PTU) deployment's latency holds, and where a pay-as-you-go
-- one starts answering 429 (counted per stage as http_4xx:429).
--
-- Azure serves the chat completions API in two shapes, and the scenario
-- speaks both:
--
--   * the deployment path (every API version): the base URL is
--     https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT, every
--     request carries ?api-version=..., and the key goes in an api-key
--     header (auth = "api-key"), never as a Bearer token;
--
--   * the v1 path (--set api_version=v1): the base URL is
--     https://RESOURCE.openai.azure.com/openai/v1, with no api-version, the
--     deployment's name as the model, and the key either in api-key or as a
--     Bearer token (a Microsoft Entra ID token: auth = "bearer").
--
-- Against a deployment:
--
--   AZURE_OPENAI_ENDPOINT=https://RESOURCE.openai.azure.com \
--   AZURE_OPENAI_API_KEY=... llmload run scenarios/azure_openai.lua \
--       --set deployment=gpt-4o-mini --set duration=2m
--
-- The key is never printed, logged or written to results, and the plan
-- (llmload check) shows the api-version it sends. With no
-- AZURE_OPENAI_ENDPOINT it runs against the built-in simulator, which takes
-- the key in api-key too (docs/azure.md).
--
-- Keys (--set): api_version=2024-10-21 deployment=gpt-4o-mini duration=4s max_tokens=64

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local deployment = llm.param("deployment", "gpt-4o-mini")
local api_version = llm.param("api_version", "2024-10-21")
local endpoint = llm.env("AZURE_OPENAI_ENDPOINT")
local prompts = llm.pool.text("data/short.txt")

-- The base URL of the shape api_version names; nil without an endpoint,
-- which runs the built-in simulator.
local function base_url()
  if not endpoint then
    return nil
  end
  local root = endpoint:gsub("/+$", "")
  if api_version == "v1" then
    return root .. "/openai/v1"
  end
  return root .. "/openai/deployments/" .. deployment
end

local query = nil
if api_version ~= "v1" then
  query = { ["api-version"] = api_version }
end

options = {
  target = {
    base_url = base_url(),
    api_key = llm.env("AZURE_OPENAI_API_KEY"),
    auth = "api-key",
    -- The deployment path ignores the model; the v1 path routes by it.
    -- Naming it also spares the preflight a model listing, which the
    -- deployment path does not serve.
    model = deployment,
    query = query,
  },
  -- Before the first stage: a cold deployment's first answers are not measured.
  warmup = { requests = 4 },
  scenarios = {
    sweep = {
      executor = "ramping-vus",
      exec = "chat",
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

function chat(vu)
  local res = llm.chat {
    messages = {
      { role = "system", content = "You are a concise assistant. Answer in a few sentences." },
      -- The unique prefix keeps Azure's prompt cache from flattering TTFT.
      { role = "user", content = ("[req_%d] %s"):format(vu.request_id, prompts:next()) },
    },
    max_tokens = llm.param("max_tokens", 64),
    temperature = 0.7,
  }
  llm.check(res, {
    ["status 200"] = res.status == 200,
    ["answered with text"] = res.ok and res.text ~= "",
  })
end
