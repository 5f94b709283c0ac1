-- setup() returns data every iteration reads; teardown(data) sees it too.
local llm = require("llmload")

options = { vus = 1, duration = "1s" }

function setup()
  local res = llm.chat { messages = { { role = "user", content = "warm the cache" } } }
  llm.check(res, { ["setup check"] = true })
  return {
    prompts = { "alpha", "beta", "gamma" },
    model = "m1",
    limits = { max_tokens = 16, [10] = "ten" },
    status = res.status,
    nested = { deep = { flag = true } },
  }
end

function teardown(data)
  torn = { model = data.model, count = #data.prompts }
  llm.chat { messages = { { role = "user", content = "teardown " .. data.model } } }
end

function iteration(vu, data)
  local keys = {}
  for k in pairs(data) do keys[#keys + 1] = k end
  table.sort(keys)
  local prompts = {}
  for i, p in ipairs(data.prompts) do prompts[i] = p end
  out = {
    keys = table.concat(keys, ","), prompts = table.concat(prompts, ","), len = #data.prompts,
    concat = table.concat(data.prompts, "+"), ten = data.limits[10], flag = data.nested.deep.flag,
    status = data.status, unpacked = select("#", unpack(data.prompts)), raw = rawget(data, "model"),
    first = next(data.prompts),
  }
  llm.chat { messages = { { role = "user", content = data.prompts[1] } }, max_tokens = data.limits.max_tokens }
end

function write_field(vu, data) data.model = "m2" end
function write_new(vu, data) data.extra = 1 end
function write_nested(vu, data) data.nested.deep.flag = false end
function write_insert(vu, data) table.insert(data.prompts, "delta") end
function write_rawset(vu, data) rawset(data, "model", "m2") end
function write_sort(vu, data) table.sort(data.prompts) end
function write_remove(vu, data) table.remove(data.prompts) end
function write_metatable(vu, data) setmetatable(data, nil) end
function pass_on(vu, data) llm.chat { messages = { { role = "user", content = "x" } }, extra = data.nested } end
