-- speech.lua — a speech server: transcription, streamed transcription and text to speech.
--
-- What it answers: how a speech server (Whisper behind vLLM or
-- faster-whisper, a TTS model behind an OpenAI-compatible API) holds up as
-- users are added (2, then 4): for transcription the time to the first
-- transcript text (streamed) and end to end, audio seconds transcribed per
-- second; for speech the time to the first audio byte, audio bytes/s and
-- the real-time factor (audio seconds made per wall second; above 1 is
-- faster than real time).
--
-- Traffic: a mix, tagged op=transcribe, op=stream or op=speak: synthetic
-- clips of 3 to 8 seconds of 16 kHz WAV (made once per process from the
-- run seed, 4 distinct clips a length) sent to POST /audio/transcriptions,
-- half of them streamed (the transcript.text.delta events), and short
-- sentences sent to POST /audio/speech for WAV audio.
--
-- Against a real server:
--
--   llmload run scenarios/speech.lua --target http://127.0.0.1:8000/v1 \
--       --model openai/whisper-small --set duration=1m
--
-- With no target it runs against llmload's built-in simulator.
--
-- Keys (--set): duration=4s voice=alloy

local llm = require("llmload")

local stage = llm.param("duration", "4s")
local voice = llm.param("voice", "alloy")

local clips = {
  short = llm.synthetic.audio { seconds = 3, sample_rate = 16000, format = "wav", variants = 4 },
  long = llm.synthetic.audio { seconds = 8, sample_rate = 16000, format = "wav", variants = 4 },
}

local sentences = llm.pool {
  "Your table for four is ready.",
  "The next train to the airport leaves from platform two in six minutes.",
  "Please hold while I connect you to the support team.",
  "Tomorrow will be sunny in the morning, with showers in the afternoon.",
}

options = {
  target = {
    base_url = llm.env("LLMLOAD_BASE_URL"),
    api_key = llm.env("LLMLOAD_API_KEY"),
    model = llm.env("LLMLOAD_MODEL"),
  },
  warmup = { requests = 3 },
  scenarios = {
    mix = {
      executor = "ramping-vus",
      exec = "speech",
      stages = {
        { name = "u2", target = 2, duration = stage },
        { name = "u4", target = 4, duration = stage },
      },
    },
  },
  thresholds = {
    ["errors.rate"] = "< 1%",
    ["checks"] = "rate > 0.99",
  },
}

function speech(vu)
  local op = llm.weighted { transcribe = 2, stream = 2, speak = 1 }
  local res
  if op == "speak" then
    res = llm.speak { input = sentences:next(), voice = voice, format = "wav", tags = { op = op } }
  else
    local length = llm.weighted { short = 3, long = 1 }
    res = llm.transcribe {
      audio = clips[length],
      language = "en",
      stream = op == "stream",
      tags = { op = op, clip = length },
    }
  end
  llm.check(res, { ["status 200"] = res.status == 200 })
end
