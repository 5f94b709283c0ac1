-- Scenarios that fail in known places; the tests name these lines.
local llm = require("llmload")

options = { vus = 1, duration = "1s" }

function iteration(vu) end

function boom(vu)
  error("boom")
end

function index_nil(vu)
  local t = nil
  return t.field
end

local function helper()
  error({ code = 1 })
end

function table_error(vu)
  helper()
end

function no_position(vu)
  error("plain", 0)
end

function spin(vu)
  while true do end
end

function spin_pcall(vu)
  while true do pcall(function() while true do end end) end
end

function nap(vu)
  llm.sleep("1h")
end

function think(vu)
  local pause = llm.think.exponential("1h")
  pause()
end

function bad_arg(vu)
  llm.sleep({})
end

function ok(vu)
  count = (count or 0) + 1
end
