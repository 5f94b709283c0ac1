local llm = require("llmload")
local cfg = nil

options = { vus = 1, duration = "1s", model = cfg.model }
