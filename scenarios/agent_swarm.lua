-- agent_swarm.lua — how long does an agent's whole task take, and how
-- much of it is the model?
--
-- What it answers: each iteration is one task of an agent swarm. A planner
-- reads the goal and answers with a plan; four workers then run in
-- parallel (llm.parallel: their requests leave at once, each on its own
-- connection), each a sub-agent that forks the planner's conversation
-- (conv:fork: the plan is a prefix every worker re-sends, which a
-- server's prefix cache serves) and makes two rounds of tool calls, a
-- tool delay after each call (llm.tool_delay: time a tool takes, counted
-- as tool time, not think time), before it answers; the planner then
-- joins their answers in one last request. The summary's "tasks" table
-- shows each stage's task p50/p99, tasks/s, the share that failed, calls
-- and tool time per task, and the goodput of tasks under options.slo.task;
-- the per-tag table shows the planner's, the workers' and the join's
-- requests apart (tag role). A user waits for the task, not for one
-- request: the task time is the planner, the slowest worker and the join.
--
-- Against a real server (vLLM needs --enable-auto-tool-choice and a
-- --tool-call-parser for the model; tool_choice "required" needs its
-- guided decoding):
--
--   llmload run scenarios/agent_swarm.lua --target http://127.0.0.1:8000/v1 \
--       --model Qwen/Qwen2.5-7B-Instruct --set duration=5m --set tool=2s
--
-- The built-in simulator calls a tool when a request requires one and
-- answers in text after the tools' results.
--
-- Keys (--set): duration=4s vus=2 workers=4 rounds=2 tool=300ms max_tokens=32 task_slo=30s

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local vus = llm.param("vus", 2)
local workers = llm.param("workers", 4)
local rounds = llm.param("rounds", 2)
local tool = llm.param("tool", "300ms")
local max_tokens = llm.param("max_tokens", 32)

local goals = llm.pool {
  "Compare three ways to cache the prefix of a long prompt.",
  "Plan a migration of a chat service from one GPU type to another.",
  "Find why the p99 time to first token doubled last week.",
  "Write a runbook for a model server that runs out of KV cache.",
}

local search = {
  type = "function",
  ["function"] = {
    name = "search",
    description = "Searches the team's documents.",
    parameters = {
      type = "object",
      properties = { query = { type = "string", description = "What to look for." } },
      required = { "query" },
    },
  },
}

options = {
  -- A task or two before the stage: the server's first requests (cold
  -- caches, new connections) are not measured.
  warmup = { requests = 2 },
  slo = { task = llm.param("task_slo", "30s") },
  scenarios = {
    swarm = { executor = "constant-vus", exec = "task", vus = vus, duration = stage },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["task_failed"] = "rate < 1%",
  },
}

-- worker is sub-agent i: it forks the plan, calls the search tool in
-- each round, waits for the tool, answers, and returns its answer.
local function worker(plan, i)
  return function()
    return llm.task("worker", function()
      local conv = plan:fork()
      conv:user(("You are worker %d of %d: research part %d of the plan."):format(i, workers, i))
      for _ = 1, rounds do
        local call = conv:send { tools = { search }, tool_choice = "required", max_tokens = max_tokens,
                                 tags = { role = "worker" } }
        if not call.ok or call.tool_calls == nil then
          return nil
        end
        llm.tool_delay(tool)
        for _, c in ipairs(call.tool_calls) do
          conv:tool(c, '{"results": ["a page of the runbook", "a benchmark from last quarter"]}')
        end
      end
      local answer = conv:send { tools = { search }, max_tokens = max_tokens, tags = { role = "worker" } }
      return answer.ok and answer.text or nil
    end)
  end
end

function task(vu)
  llm.task("swarm", function()
    local plan = llm.conversation {
      system = "You are a planner. Split the goal into parts for your workers.",
      tags = { agent = "swarm" },
    }
    plan:user(("[task_%d] %s"):format(vu.request_id, goals:next()))
    local planned = plan:send { max_tokens = max_tokens, tags = { role = "planner" } }
    if not planned.ok then
      return
    end
    local fns = {}
    for i = 1, workers do
      fns[i] = worker(plan, i)
    end
    local answers = llm.parallel(fns)
    local parts = {}
    for i = 1, workers do
      parts[#parts + 1] = ("worker %d: %s"):format(i, answers[i] or "(no answer)")
    end
    plan:user("Join the workers' answers into one:\n" .. table.concat(parts, "\n"))
    local joined = plan:send { max_tokens = max_tokens, tags = { role = "join" } }
    llm.check(joined, { ["joined"] = joined.ok })
  end)
end
