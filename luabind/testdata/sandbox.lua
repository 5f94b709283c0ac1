-- Each probe_* reaches for something the sandbox must not offer.
options = { vus = 1, duration = "1s" }
function iteration(vu) end

function probe_os_execute(vu) return os.execute("true") end
function probe_os_exit(vu) return os.exit(3) end
function probe_os_getenv(vu) return os.getenv("HOME") end
function probe_os_remove(vu) return os.remove("testdata/evil.lua") end
function probe_io(vu) return io.open("testdata/evil.lua") end
function probe_load(vu) return load(function() return nil end) end
function probe_loadstring(vu) return loadstring("return 1") end
function probe_loadfile(vu) return loadfile("testdata/evil.lua") end
function probe_dofile(vu) return dofile("testdata/evil.lua") end
function probe_require_file(vu) return require("testdata.evil") end
function probe_require_module(vu) return require("io") end
function probe_loadlib(vu) return package.loadlib("x", "y") end
function probe_debug(vu) return debug.traceback() end
function probe_channel(vu) return channel.make() end
function probe_coroutine(vu) return coroutine.create(function() end) end
function probe_collectgarbage(vu) return collectgarbage() end

function allowed(vu)
  out = {
    time = type(os.time()), clock = type(os.clock()), date = os.date("!%Y", 0),
    upper = string.upper("x"), floor = math.floor(1.5), concat = table.concat({ "a", "b" }, ","),
    pcall = pcall(error, "x"), format = ("%d"):format(3), random = type(math.random(1, 6)),
    required = type(require("llmload")), required_string = require("string") == string,
  }
end
