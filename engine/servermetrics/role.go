package servermetrics

import (
	"slices"
	"strings"
)

// Role is what a series means whichever server exposed it, so that the
// analysis and the reports read "the queue" or "the server's TTFT" without
// knowing each server's names. A latency histogram gives one role per
// statistic: RoleTTFT.P99() is "ttft_p99".
type Role string

// The roles every known server maps to (each server has some of them).
const (
	RoleRunning      Role = "running"       // requests in the running batch (sum over label sets)
	RoleWaiting      Role = "waiting"       // requests queued, not yet running
	RoleKVCache      Role = "kv_cache"      // KV-cache (or token pool) in use, 0..1
	RolePrefixHit    Role = "prefix_hit"    // prefix-cache hit ratio, 0..1
	RolePromptTokens Role = "prompt_tokens" // prompt tokens per second
	RoleOutputTokens Role = "output_tokens" // generated tokens per second
	RolePreemptions  Role = "preemptions"   // preemptions per second
	RoleTTFT         Role = "ttft"          // time to first token, ms
	RoleITL          Role = "itl"           // inter-token latency, one observation per token, ms
	RoleTPOT         Role = "tpot"          // time per output token, one observation per request, ms
	RoleE2E          Role = "e2e"           // request latency, ms
	RoleQueueTime    Role = "queue_time"    // time a request waited before running, ms
	RolePrefillTime  Role = "prefill_time"  // time a request spent in prefill, ms
	RoleDecodeTime   Role = "decode_time"   // time a request spent in decode, ms
	RoleInference    Role = "inference"     // prefill and decode together, ms

	// Speculative decoding. vLLM counts drafts, drafted and accepted
	// tokens (increases per scrape interval, so a stage divides its own
	// sums); SGLang gauges its acceptance rate and length directly.
	RoleSpecDrafts       Role = "spec_drafts"        // drafts proposed, per scrape interval
	RoleSpecDraftTokens  Role = "spec_draft_tokens"  // draft tokens proposed, per scrape interval
	RoleSpecAccepted     Role = "spec_accepted"      // draft tokens accepted, per scrape interval
	RoleSpecAcceptRate   Role = "spec_accept_rate"   // accepted ÷ drafted tokens, 0..1
	RoleSpecAcceptLength Role = "spec_accept_length" // tokens per step, the bonus token included

	// A GPU's telemetry, one series per device (Series.GPU).
	RoleGPUUtil    Role = "gpu_util"     // busy share of the sample period, percent
	RoleGPUPower   Role = "gpu_power"    // power draw, W
	RoleGPUMemUsed Role = "gpu_mem_used" // framebuffer memory used, MiB
	RoleGPUMemFree Role = "gpu_mem_free" // framebuffer memory free, MiB
	RoleGPUEnergy  Role = "gpu_energy"   // energy used in each scrape interval, J
)

// P50 is the role of a latency role's median series.
func (r Role) P50() Role { return r + "_p50" }

// P99 is the role of a latency role's 99th-percentile series.
func (r Role) P99() Role { return r + "_p99" }

// Mean is the role of a latency role's mean, for a server that exposes
// counters of time and count instead of a histogram (llama.cpp).
func (r Role) Mean() Role { return r + "_mean" }

// IsTail says whether the role is a high quantile: over a window, the
// worst interval bounds it, where a mean of interval p99s would hide a
// burst.
func (r Role) IsTail() bool { return strings.HasSuffix(string(r), "_p99") }

// Server kinds, as Result.Server names them.
const (
	ServerVLLM     = "vllm"
	ServerSGLang   = "sglang"
	ServerTGI      = "tgi"
	ServerLlamaCpp = "llamacpp"
	// ServerDCGM is NVIDIA's DCGM exporter: a GPU's telemetry, not an
	// inference server, kept apart from the servers (Result.GPUs).
	ServerDCGM = "dcgm"
	// ServerNvidiaSMI is nvidia-smi sampled on llmload's machine
	// (engine/gpu); its series are the DCGM exporter's.
	ServerNvidiaSMI = "nvidia-smi"
)

// servers are the known kinds in the order notes list them, with the name
// a reader knows them by and the prefix of their metric names.
var servers = []struct{ kind, name, prefix string }{
	{ServerVLLM, "vLLM", "vllm:"},
	{ServerSGLang, "SGLang", "sglang:"},
	{ServerTGI, "TGI", "tgi_"},
	{ServerLlamaCpp, "llama.cpp", "llamacpp:"},
}

// exporters are the known GPU telemetry sources, recognised as servers
// are but never listed among them.
var exporters = []struct{ kind, name, prefix string }{
	{ServerDCGM, "DCGM exporter", "DCGM_FI_"},
	{ServerNvidiaSMI, "nvidia-smi", "nvidia-smi:"},
}

// kinds are the servers and the GPU exporters together, for lookups by
// kind or by prefix.
var kinds = slices.Concat(servers, exporters)

// IsGPU says whether a kind is a GPU telemetry source rather than an
// inference server.
func IsGPU(kind string) bool { return kind == ServerDCGM || kind == ServerNvidiaSMI }

// ServerName is how a report names a server kind ("vLLM", "llama.cpp");
// the kind itself when it is not a known one.
func ServerName(kind string) string {
	for _, s := range kinds {
		if s.kind == kind {
			return s.name
		}
	}
	return kind
}

// knownServers lists the known servers' names: "vLLM, SGLang, TGI, llama.cpp".
func knownServers() string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// kindOf is the server kind a metric or series name belongs to, "" for
// none known.
func kindOf(name string) string {
	for _, s := range kinds {
		if strings.HasPrefix(name, s.prefix) {
			return s.kind
		}
	}
	return ""
}

// roleByName maps every series name the chosen table can produce to its
// role, for series recorded before Series.Role existed (or joined by a
// merge that did not keep it).
var roleByName = func() map[string]Role {
	m := map[string]Role{}
	for _, c := range chosen {
		for i := range c.seriesCount() {
			if r := c.seriesRole(i); r != "" {
				m[c.seriesName(i)] = r
			}
		}
	}
	return m
}()

// RoleOf is the role of a series: its own, else the one its name has in
// the table of known metrics; "" when it has none.
func RoleOf(s *Series) Role {
	if s.Role != "" {
		return s.Role
	}
	return roleByName[s.Name]
}
