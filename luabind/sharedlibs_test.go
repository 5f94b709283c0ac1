package luabind

import (
	"strings"
	"sync"
	"testing"

	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/sandbox"
	"github.com/llmload/llmload/luabind/vm"
	lua "github.com/yuin/gopher-lua"
)

// TestSharedLibsStayPerVU: the libraries are shared, but what a script
// adds to them is its VU's own, as it would be with a library per VU.
func TestSharedLibsStayPerVU(t *testing.T) {
	src := `options = { vus = 2, duration = "1s" }
out = {}
function iteration(vu) end
function add(vu)
  function string.shout(s) return s:upper() .. "!" end
  table.answer = 42
  math.pi = 3
end
function look(vu)
  out.shout = ("hi").shout and ("hi"):shout() or "none"
  out.answer = table.answer or "none"
  out.pi = math.pi
  out.format = string.format("%d-%s", 7, ("x"):rep(3))
  out.concat = table.concat({ "a", "b" }, ",")
  out.floor = math.floor(2.5)
  out.clock = type(os.clock())
  out.mt = tostring(getmetatable(string))
  out.protected = pcall(setmetatable, string, {})
end
`
	s := mustCompile(t, writeScript(t, "libs.lua", src), Options{})
	a, b := newVU(t, s, api.RunnerConfig{}, 1), newVU(t, s, api.RunnerConfig{}, 2)
	mustRun(t, a, "add")
	mustRun(t, a, "look")
	mustRun(t, b, "look")
	for _, tt := range []struct {
		v          *vm.VU
		key, want  string
		whoseTable string
	}{
		{a, "shout", "HI!", "the VU that added it"}, {b, "shout", "none", "another VU"},
		{a, "answer", "42", "the VU that added it"}, {b, "answer", "none", "another VU"},
		{a, "pi", "3", "the VU that set it"}, {b, "pi", "3.141592653589793", "another VU"},
		{b, "format", "7-xxx", "any VU"}, {b, "concat", "a,b", "any VU"}, {b, "floor", "2", "any VU"},
		{b, "clock", "number", "any VU"}, {b, "mt", "string", "any VU"}, {b, "protected", "false", "any VU"},
	} {
		if got := out(t, tt.v, tt.key).String(); got != tt.want {
			t.Errorf("%s in %s: %q, want %q", tt.key, tt.whoseTable, got, tt.want)
		}
	}
}

func TestSharedOSExplainsRemoved(t *testing.T) {
	src := "options = { vus = 1, duration = \"1s\" }\nfunction iteration(vu)\n  os.execute(\"true\")\nend\n"
	v := newVU(t, mustCompile(t, writeScript(t, "os.lua", src), Options{}), api.RunnerConfig{}, 1)
	if err := run(t, v, "iteration"); err == nil || !strings.Contains(err.Error(), "os.lua:3: os.execute is not available") {
		t.Errorf("err = %v", err)
	}
}

// TestSharedLibsConcurrently: VUs call the shared functions at once (run
// with -race).
func TestSharedLibsConcurrently(t *testing.T) {
	src := `options = { vus = 4, duration = "1s" }
function iteration(vu) end
function busy(vu)
  for i = 1, 200 do
    local s = string.format("%05d", i):rep(2):upper()
    local t = { s, tostring(math.floor(i / 3)) }
    table.insert(t, "x")
    table.sort(t)
    assert(#table.concat(t, ",") > 0 and s:find("0") ~= nil)
  end
end
`
	s := mustCompile(t, writeScript(t, "busy.lua", src), Options{})
	var wg sync.WaitGroup
	for id := 1; id <= 4; id++ {
		v := newVU(t, s, api.RunnerConfig{}, id)
		wg.Go(func() {
			if err := run(t, v, "busy"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// The shared tables are never the ones a VU sees.
func TestSharedTablesUnreachable(t *testing.T) {
	v := newVU(t, mustCompile(t, writeScript(t, "x.lua", "options = { vus = 1, duration = \"1s\" }\nfunction iteration(vu) end\n"),
		Options{}), api.RunnerConfig{}, 1)
	for _, name := range sandbox.SharedNames {
		if v.L.GetGlobal(name) == lua.LValue(sandbox.Shared().Tables[name]) {
			t.Errorf("%s: the VU holds the shared table itself", name)
		}
	}
}
