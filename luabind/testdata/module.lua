-- Exercises require("llmload") outside llm.chat; each function fills the
-- global table out for the Go test to read.
local llm = require("llmload")

options = { vus = 1, duration = "1s" }

local letters = llm.pool { "a", "b", "c" }

-- Counted nowhere: checks at init are not measurements.
llm.check({}, { ["init check"] = true })

function iteration(vu) end

function env(vu)
  out = { set = llm.env("LLMLOAD_TEST_SET"), unset = llm.env("LLMLOAD_TEST_UNSET"),
          default = llm.env("LLMLOAD_TEST_UNSET", "fallback"), set_default = llm.env("LLMLOAD_TEST_SET", "fallback") }
end

function params(vu)
  out = { name = llm.param("name"), rate = llm.param("rate", 1), ratio = llm.param("ratio", 0.5),
          stream = llm.param("stream", false), missing = llm.param("missing"),
          missing_default = llm.param("missing", 7), name_default = llm.param("name", "x") }
  out.rate_plus = out.rate + 1
end

function param_not_number(vu) return llm.param("name", 1) end
function param_not_bool(vu) return llm.param("name", true) end
function param_bad_default(vu) return llm.param("name", {}) end

function pool_next(vu)
  out = { letters:next(), letters:next(), letters:next(), letters:next(), len = letters:len(), hash = #letters }
end

function pool_random(vu)
  out = {}
  for i = 1, 300 do
    local x = letters:random()
    out[x] = (out[x] or 0) + 1
  end
end

function pool_empty(vu) llm.pool {} end
function pool_not_string(vu) llm.pool { "a", 2 } end
function pool_map(vu) llm.pool { "a", x = "b" } end
function pool_dot_call(vu) return letters.next() end

function weighted(vu)
  out = {}
  for i = 1, 4000 do
    local k = llm.weighted { short = 1, long = 3 }
    out[k] = (out[k] or 0) + 1
  end
end

function weighted_zero(vu) llm.weighted { a = 1, b = 0 } end
function weighted_string(vu) llm.weighted { a = "1" } end
function weighted_empty(vu) llm.weighted {} end

function rand_int(vu)
  out = { min = math.huge, max = -math.huge, draws = {} }
  for i = 1, 1000 do
    local x = llm.rand_int(1, 6)
    out.min, out.max = math.min(out.min, x), math.max(out.max, x)
    out.whole = (out.whole ~= false) and x == math.floor(x)
  end
  out.default = llm.rand_int()
  for i = 1, 5 do out.draws[i] = llm.rand_int() end
  out.same = llm.rand_int(4, 4)
  out.math = math.random(1, 6)
end

function rand_int_one_arg(vu) return llm.rand_int(5) end
function rand_int_reversed(vu) return llm.rand_int(6, 1) end
function rand_int_fraction(vu) return llm.rand_int(1, 2.5) end

function sleep(vu)
  local t0 = os.clock()
  llm.sleep("30ms")
  llm.sleep(0.03)
  llm.sleep(0)
  out = { slept = os.clock() - t0 }
end

function sleep_bad(vu) llm.sleep("soon") end
function sleep_negative(vu) llm.sleep(-1) end

function think(vu)
  local t0 = os.clock()
  llm.think.constant("20ms")()
  llm.think.between("10ms", "20ms")()
  llm.think.between(0, 0)()
  llm.think.exponential("1ms")()
  out = { slept = os.clock() - t0 }
end

function think_reversed(vu) llm.think.between("2s", "1s") end
function think_zero_mean(vu) llm.think.exponential(0) end

function checks(vu)
  local res = { status = 200 }
  out = {
    all = llm.check(res, {
      ["is 200"] = res.status == 200,
      ["fn ok"] = function(r) return r.status == 200 end,
      ["fn fails"] = function(r) return r.status == 500 end,
      ["fn errors"] = function(r) error("broken check") end,
      ["truthy"] = "yes",
      ["nil"] = nil,
    }),
    passing = llm.check(res, { ["is 200"] = true }),
  }
end

function check_not_table(vu) llm.check({}, true) end

function draws(vu)
  out = {}
  for i = 1, 8 do
    out[#out + 1] = llm.rand_int()
    out[#out + 1] = llm.weighted { a = 1, b = 1, c = 1 }
    out[#out + 1] = letters:random()
    out[#out + 1] = math.random(1000)
  end
end
