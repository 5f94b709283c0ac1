-- Init spins forever once SPIN is set, which the test does after Compile.
local llm = require("llmload")
options = { vus = 1, duration = "1s" }
function iteration(vu) end
if llm.env("SPIN") then while true do end end
