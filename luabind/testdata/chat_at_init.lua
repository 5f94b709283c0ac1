local llm = require("llmload")

llm.chat { messages = { { role = "user", content = "hi" } } }
