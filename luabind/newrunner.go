package luabind

import (
	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/luabind/api"
	"github.com/llmload/llmload/luabind/vm"
)

// NewRunner returns a Runner whose VUs run this script. It also implements
// engine.Lifecycle, for the script's setup() and teardown().
func (s *Script) NewRunner(cfg api.RunnerConfig) engine.Runner {
	return vm.NewRunner(s.Program, cfg)
}
