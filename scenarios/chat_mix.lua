-- chat_mix.lua — the classic chat benchmark, done right.
--
-- What it answers: how TTFT, TPOT, ITL and end-to-end latency behave as
-- concurrency grows (1, 4, 8, 16 users), and where throughput stops growing
-- (the knee) while tail latency shoots up (the cliff).
--
-- Traffic: a mix of short, medium and long prompts in Chinese and English,
-- because LLM latency is bimodal — "1+1等于几？" answers in a blink while a
-- market-analysis brief takes seconds — and an average over one kind hides
-- the other. Every request starts with a unique "[req_N]" prefix so the
-- server's prefix cache cannot make TTFT look better than production, and
-- uses temperature 0.7 with a random seed so answers vary like real ones.
--
-- Why the stage length matters: a p99 is the value 1% of requests exceed.
-- With 100 samples that is the single worst request — noise, not a
-- measurement. You need at least 1,000 samples per stage for a p99 you can
-- act on (llmload flags p99s from fewer). The defaults keep the whole run
-- near a minute on the built-in simulator; for a real measurement run e.g.
--
--   llmload run scenarios/chat_mix.lua --set duration=5m \
--       --target http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
--
-- and LLMLOAD_METRICS_URL=http://127.0.0.1:8000/metrics to read the
-- server's own running and waiting requests beside the client's view.
--
-- With no target (no --target, LLMLOAD_BASE_URL or options.target.base_url)
-- it runs against llmload's built-in simulator.
--
-- Keys (--set): duration=12s max_tokens=200

local llm = require("llmload")

local stage = llm.param("duration", "12s")
local max_tokens = llm.param("max_tokens", 200)

local pools = {
  short = llm.pool {
    "什么是机器学习？",
    "1+1等于几？",
    "今天天气怎么样？",
    "What is a hash map?",
    "Translate 'good morning' into French.",
    "Name three prime numbers.",
  },
  medium = llm.pool {
    "请详细解释深度学习和传统机器学习的区别，并各举两个实际应用的例子。",
    "Explain how a B-tree index speeds up database queries, and when it does not help.",
    "比较 TCP 和 UDP 的优缺点，说明视频会议通常选择哪一种以及原因。",
    "Describe the CAP theorem and give an example of a system that chooses availability over consistency.",
  },
  long = llm.pool {
    [[You are a senior market analyst. Write a structured brief for the board of a mid-sized
electric-scooter maker that is deciding whether to enter the Southeast Asian market next year.
Cover: market size and growth in Indonesia, Vietnam, Thailand and the Philippines; the
regulatory picture (licensing, helmet and speed rules, import duties); the competitive
landscape (local brands, Chinese exporters, ride-hailing fleets); unit economics of direct
sales versus fleet partnerships; battery-swap infrastructure and who controls it; currency and
supply-chain risks; and three entry strategies with their capital needs, expected payback and
the leading indicators the board should watch in the first six months. End with a clear
recommendation and the two assumptions that, if wrong, would change it.]],
    [[请以资深行业分析师的身份，为一家准备进入东南亚市场的新能源汽车零部件企业撰写一份市场分析简报。
内容需要包括：印尼、越南、泰国和菲律宾四国的市场规模与增长预测；各国的产业政策、关税与本地化要求；
主要竞争对手（日系、韩系、中国企业及本地厂商）的布局与优势；供应链与物流成本；汇率与政治风险；
以及三种可选的进入策略（独资建厂、合资合作、出口加本地服务网点），分别给出资金需求、回收周期和风险。
最后给出明确建议，并指出最关键的两个假设。]],
  },
}

options = {
  target = {
    base_url = llm.env("LLMLOAD_BASE_URL"),
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL"),
    -- The server's Prometheus endpoint, read during the run so its queue
    -- sits beside the client's latencies (the simulator's is found alone).
    metrics_url = llm.env("LLMLOAD_METRICS_URL"),
  },
  warmup = { requests = 5 },
  scenarios = {
    sweep = {
      executor = "ramping-vus",
      exec = "chat",
      stages = {
        { name = "c1", target = 1, duration = stage },
        { name = "c4", target = 4, duration = stage },
        { name = "c8", target = 8, duration = stage },
        { name = "c16", target = 16, duration = stage },
      },
    },
  },
}

function chat(vu)
  local kind = llm.weighted { short = 3, medium = 5, long = 2 }
  local res = llm.chat {
    messages = {
      { role = "user", content = ("[req_%d] %s"):format(vu.request_id, pools[kind]:next()) },
    },
    max_tokens = max_tokens,
    temperature = 0.7,
    seed = llm.rand_int(),
    tags = { prompt = kind },
  }
  llm.check(res, { ["status 200"] = res.status == 200 })
end
