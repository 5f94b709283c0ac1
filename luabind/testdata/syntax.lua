local llm = require("llmload")

function chat(vu)
  local x = = 1
end
