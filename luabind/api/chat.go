package api

import (
	"context"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
	lua "github.com/yuin/gopher-lua"
)

// chat implements llm.chat{ messages = {{role=, content=}, ...}, model=?,
// max_tokens=?, temperature=?, top_p=?, seed=?, stop=?, tools=?,
// tool_choice=?, extra=?, tags=?, stream=?, ignore_eos=?, min_tokens=?,
// dirty=?, headers=? } -> result. It sends one request, records its sample and
// returns the result table resultTable describes. tools (OpenAI's shape,
// {type="function", function={name=, parameters=}}) and tool_choice are
// sent as given; an answer's calls are the result's tool_calls, and a
// message may carry tool_calls (an assistant's) or tool_call_id (a tool's
// answer) to continue the turn. stream = false asks for one JSON answer, which has no TTFT,
// TTFC or ITL. ignore_eos and min_tokens are vLLM's extensions to get
// exactly the lengths a synthetic workload asks for. dirty = "kind"
// malforms this request that way (see llm.dirty.kinds()); otherwise
// options.dirty may pick a kind. headers = { ["X-Tenant"] = "a" } are sent
// on this request only, each replacing options.target's header of that
// name (DecodeHeaders checks them). A failed request is data, not a Lua
// error; a malformed table is a Lua error. It works in iterations and in
// setup/teardown, whose samples are not recorded; at init it is an error.
func (m *Module) chat(L *lua.LState) int {
	return m.sendRequest(L, "llm.chat", L.CheckTable(1), m.chatRequest, nil)
}

// complete implements llm.complete{ prompt = "...", model=?, max_tokens=?,
// temperature=?, top_p=?, seed=?, stop=?, extra=?, tags=?, stream=?,
// ignore_eos=?, min_tokens=?, dirty=?, headers=? } -> result: llm.chat for the legacy
// completions endpoint, with a prompt instead of messages and the same
// sample and result table.
func (m *Module) complete(L *lua.LState) int {
	return m.sendRequest(L, "llm.complete", L.CheckTable(1), m.completeRequest, nil)
}

// requestBuilder validates a request table into a request and the dirty
// kind the table forces.
type requestBuilder func(*lua.LTable) (*engine.ChatRequest, string, error)

// sendRequest builds a request from tbl with build, malforms it when
// options.dirty or the table asks, sends it, records its sample and
// pushes the result table; after, when set, sees the result first (on the
// VU's goroutine). name is the Lua function for errors. In a branch of
// llm.parallel the request goes out while the other branches run.
func (m *Module) sendRequest(L *lua.LState, name string, tbl *lua.LTable, build requestBuilder, after func(*engine.Result)) int {
	if m.Phase != phaseIteration && m.Phase != PhaseLifecycle {
		L.RaiseError("%s can only be called inside an iteration, setup() or teardown()", name)
	}
	if m.cfg == nil || m.cfg.Client == nil {
		L.RaiseError("%s: no client configured", name)
	}
	req, forced, err := build(tbl)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	req.PrefixAsked = m.askedBy(req)
	if err := m.routeTarget(req); err != nil {
		L.RaiseError("%s: target: %v", name, err)
	}
	req, kind, err := m.maybeMalform(req, forced)
	if err != nil {
		L.RaiseError("%s: %v", name, err)
	}
	// Observed on the VU's goroutine, as it goes out: an observer sees a
	// VU's requests one at a time, branches included.
	if m.cfg.Observe != nil {
		m.cfg.Observe(m.it, req, kind)
	}
	thread := L
	return m.await(L, name, func(ctx context.Context) any {
		res := m.cfg.Client.Chat(ctx, req)
		if res == nil {
			res = &engine.Result{Start: time.Now(), NotSent: true,
				Err: &engine.Error{Class: engine.ErrCanceled, Message: name + ": the client returned no result"}}
		}
		return res
	}, func(L *lua.LState, v any) int {
		res := v.(*engine.Result)
		m.recordSample(req, kind, res)
		m.countRequest(thread, res)
		if after != nil {
			after(res)
		}
		L.Push(resultTable(L, res))
		return 1
	})
}

// routeTarget gives a request that names no target its scenario's, and
// refuses a target the plan does not have: sent, it could only fail.
func (m *Module) routeTarget(req *engine.ChatRequest) error {
	if req.Target == "" && m.it != nil {
		req.Target = m.prog.ScenarioTargets[m.it.Scenario]
	}
	if req.Target == "" {
		return nil
	}
	return plan.CheckTargetName(m.prog.Targets, req.Target)
}

// recordSample hands the request's sample to the sink, labelled with the
// iteration's scenario and stage and the scenario's and request's tags.
// A dirty request's sample carries its kind, so it stays out of the
// clean statistics. Only the iteration's first request carries its intended start: later
// ones were not scheduled, they follow the first.
func (m *Module) recordSample(req *engine.ChatRequest, dirtyKind string, res *engine.Result) {
	if m.cfg.Sink == nil || m.it == nil || res.NotSent {
		return // a request that never reached the connection is no sample
	}
	s := engine.Sample{
		Scenario: m.it.Scenario,
		Stage:    m.it.Stage,
		Tags:     mergeTags(m.prog.Tags[m.it.Scenario], req.Tags),
		Warmup:   m.it.Warmup,
		Dirty:    dirtyKind,
		Result:   *res,
	}
	s.PrefixAsked = req.PrefixAsked
	if !m.scheduled {
		s.Scheduled, m.scheduled = m.it.Scheduled, true
	}
	if m.it.Trace != nil {
		s.TraceRecord = m.it.Trace.Record + 1 // every request of the iteration replays the record
	}
	s.Text = ""
	if n := len(s.ToolCalls); n > 0 {
		// Only how many calls the answer made is kept: their arguments,
		// like the text, would weigh on every sample in flight.
		s.ToolCalls = make([]engine.ToolCall, n)
	}
	m.cfg.Sink.Sample(s)
}

// mergeTags returns a new map of base overlaid with over, nil when both
// are empty; request tags win over scenario tags.
func mergeTags(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
