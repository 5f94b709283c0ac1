// Package engine holds the seams between llmload's parts: the request a
// client sends and the Result it measures, the Sample and marks every
// measurement flows into a Sink as, and the Runner that makes VUs that run
// iterations. It imports only engine/plan (an iteration carries its trace
// record) and engine/media (a message's images and audio), and knows no Lua, so executors, clients and aggregators can be
// tested with fakes.
package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/llmload/llmload/engine/media"
	"github.com/llmload/llmload/engine/plan"
)

// Message is one chat message. ToolCalls (an assistant's calls) and
// ToolCallID (a tool's answer to one of them) carry a tool-calling turn;
// they are left out of the body when empty. Parts, when set, are the
// message's content instead of Content: text, images, audio and video,
// which each dialect sends in its API's own wire form.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Parts      []Part     `json:"-"`
}

// Part types of a message's content.
const (
	PartText  = "text"
	PartImage = "image"
	PartAudio = "audio"
	PartVideo = "video"
)

// Part is one part of a message's content: Text for a text part; for a
// media part either Media (bytes sent inline, as base64) or URL (a link
// the server fetches itself).
type Part struct {
	Type  string // PartText, PartImage, PartAudio or PartVideo
	Text  string
	Media *media.Item
	URL   string
	// Detail is an image's detail ("low", "high", "auto"; "" not sent).
	Detail string
}

// HasMedia reports whether any message of msgs has a media part.
func HasMedia(msgs []Message) bool {
	for i := range msgs {
		for j := range msgs[i].Parts {
			if msgs[i].Parts[j].Type != PartText {
				return true
			}
		}
	}
	return false
}

// ToolCall is one call of a tool (a function) that a model asked for:
// its id, the function's name and its arguments as the JSON text the
// model generated. Its JSON is OpenAI's chat shape, {"id":...,
// "type":"function","function":{"name":...,"arguments":...}}.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// toolCallJSON is ToolCall's JSON shape.
type toolCallJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON encodes c in OpenAI's chat shape.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	j := toolCallJSON{ID: c.ID, Type: "function"}
	j.Function.Name, j.Function.Arguments = c.Name, c.Arguments
	return json.Marshal(j)
}

// UnmarshalJSON decodes OpenAI's chat shape.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var j toolCallJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = ToolCall{ID: j.ID, Name: j.Function.Name, Arguments: j.Function.Arguments}
	return nil
}

// Endpoints a request can go to: the APIs of inference servers and
// gateways. Result.API names the one a request used.
const (
	EndpointChat        = "chat"        // POST /chat/completions: Messages
	EndpointCompletions = "completions" // POST /completions: Prompt
	// EndpointResponses is OpenAI's Responses API, POST /responses: Prompt
	// (a string input) or Messages, System as its instructions, MaxTokens
	// as max_output_tokens.
	EndpointResponses = "responses"
	// EndpointMessages is Anthropic's Messages API, POST /messages:
	// Messages, System, MaxTokens; the API key goes in x-api-key.
	EndpointMessages = "messages"
	// EndpointEmbeddings is POST /embeddings, never streamed: Inputs, or
	// Prompt as one string input.
	EndpointEmbeddings = "embeddings"
	// EndpointTranscriptions is POST /audio/transcriptions, multipart:
	// Audio, Model, Language, Prompt; streamed unless NoStream.
	EndpointTranscriptions = "transcriptions"
	// EndpointSpeech is POST /audio/speech: Prompt is the text to speak,
	// Voice and AudioFormat its voice and format; the answer is audio
	// bytes, timed from the first.
	EndpointSpeech = "speech"
)

// Endpoints returns every endpoint, chat first.
func Endpoints() []string {
	return []string{EndpointChat, EndpointCompletions, EndpointResponses, EndpointMessages, EndpointEmbeddings,
		EndpointTranscriptions, EndpointSpeech}
}

// ChatRequest is one request to an inference endpoint as a scenario asks
// for it: a chat completion by default, or any other Endpoint. Pointer and
// zero fields are left out of the request body, so the server's defaults
// apply.
type ChatRequest struct {
	Endpoint string // EndpointChat when empty
	Model    string
	Messages []Message // chat, messages, responses
	Prompt   string    // completions; a string input of responses and embeddings
	// System is the system prompt of the Messages API (system) and the
	// Responses API (instructions); "" is not sent.
	System string
	// Inputs are the inputs of an embeddings request, sent as a list
	// (nil: Prompt is the one input, sent as a string).
	Inputs      []string
	NoStream    bool // stream=false: TTFT, TTFC and ITL are not measurable
	MaxTokens   int  // 0: not sent
	Temperature *float64
	TopP        *float64
	Seed        *int64
	Stop        []string
	// Tools are the tools (functions) the model may call, each a JSON
	// object in the endpoint's own shape, and ToolChoice whether and which
	// it must call ("auto", "required", "none", or an object); nil is not
	// sent.
	Tools      []any
	ToolChoice any
	// Extra fields are merged into the JSON body last, so they may add
	// vendor extensions or override any field above.
	Extra map[string]any
	// IgnoreEOS and MinTokens ask the server (vLLM's extensions) to generate
	// exactly max_tokens, so synthetic workloads get the lengths they ask for.
	IgnoreEOS bool
	MinTokens int
	// Raw, when set, is sent as the body verbatim instead of a body built
	// from the fields above: dirty-data kinds that no valid request can
	// express (broken JSON, invalid UTF-8, deep nesting).
	Raw []byte
	// ContentType overrides the request's Content-Type header.
	ContentType string
	// Tags label the resulting sample; they are never sent.
	Tags map[string]string
	// PrefixAsked is what the prompt asks of the server's prefix cache
	// (see Sample.PrefixAsked); never sent.
	PrefixAsked PrefixAsked
	// Target names the endpoint of options.targets the request goes to;
	// "" lets the run's balancer choose.
	Target string
	// Headers are sent on this request after the target's own, each
	// replacing the target's header of the same name.
	Headers []Header
	// Audio is the file a transcription transcribes; Language its
	// language ("" not sent). Voice and AudioFormat are a speech
	// request's voice and response_format ("" not sent).
	Audio       *media.Item
	Language    string
	Voice       string
	AudioFormat string
}

// Header is one HTTP header of a request.
type Header struct {
	Name, Value string
}

// Client sends one request and measures it. Failures are data: they come
// back in Result.Err, never as a Go error. Safe for concurrent use.
type Client interface {
	Chat(ctx context.Context, req *ChatRequest) *Result
}

// Error classes, as DESIGN.md defines them. HTTP failures use HTTPErrorClass.
const (
	ErrTimeoutConnect  = "timeout_connect"
	ErrTimeoutTTFT     = "timeout_ttft"
	ErrTimeoutIdle     = "timeout_idle"
	ErrTimeoutTotal    = "timeout_total"
	ErrConnRefused     = "conn_refused"
	ErrConnReset       = "conn_reset"
	ErrStreamTruncated = "stream_truncated"
	ErrStreamMalformed = "stream_malformed"
	ErrAPI             = "api_error"
	ErrCanceled        = "canceled"
	ErrNetwork         = "network" // any other transport failure (DNS, TLS, ...)
	// ErrInvalidRequest: the request could not be encoded (e.g. NaN in
	// Extra), so nothing was sent and the scenario is at fault.
	ErrInvalidRequest = "invalid_request"
)

// HTTPErrorClass returns the error class of an HTTP status, e.g. "http_4xx:401".
func HTTPErrorClass(status int) string {
	return "http_" + strconv.Itoa(status/100) + "xx:" + strconv.Itoa(status)
}

// Error is a classified request failure.
type Error struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Class + ": " + e.Message }

// Token count sources, best first.
const (
	TokensFromUsage     = "usage"     // the server's usage object
	TokensFromTokenizer = "tokenizer" // the client's offline tokenizer
	TokensFromEvents    = "events"    // approximate: one token per text event
)

// Result is the outcome of one request as the client measured it. Durations
// are measured from t0 (Start) on the monotonic clock; zero means "not
// measured" (no text arrived, fewer than two tokens, ...).
type Result struct {
	// Start is t0, the moment the request was handed to its connection
	// (its headers written), from which every latency is timed; when no
	// connection was reached, the moment the request was issued.
	Start time.Time
	// API is the endpoint the request went to (EndpointChat, ...).
	API string
	// Connect is the time from issuing the request to t0: obtaining a
	// connection (dialing, TLS) and the client's own delay in writing to
	// it. It is not in any latency, so a burst of requests that the
	// client itself queues cannot inflate TTFT; a slow accept or
	// handshake shows here instead.
	Connect time.Duration
	// TLS is the TLS handshake's part of Connect; 0 on a plain or reused
	// connection.
	TLS time.Duration
	// Target is the name of the options.targets endpoint that served the
	// request; "" in a run with one target.
	Target string
	Status int // HTTP status, 0 when no response arrived
	Err    *Error
	TTFB   time.Duration
	TTFT   time.Duration // first text of any kind, reasoning included
	TTFC   time.Duration // first content (answer) text; equals TTFT without reasoning
	E2E    time.Duration
	TPOT   time.Duration
	ITL    []time.Duration // one per gap between text-carrying events
	// TokenITL holds one gap per token, a chunk's gap divided by the tokens
	// it carried, when per-chunk usage says how many; nil otherwise.
	TokenITL          []time.Duration
	InputTokens       int
	InputTokensSource string
	// CachedTokens are the prompt tokens the server says it served from
	// its prefix cache (usage.prompt_tokens_details.cached_tokens, or
	// llama.cpp's timings); 0 when it does not say.
	CachedTokens int
	OutputTokens int
	TokensSource string // source of OutputTokens
	// ClientOutputTokens is the offline tokenizer's count of the generated
	// text (answer and reasoning), kept beside server usage so the two can
	// be compared; 0 when not counted.
	ClientOutputTokens int
	ReasoningTokens    int
	FinishReason       string
	Text               string
	// ToolCalls are the tool calls of the answer (choice 0's), in order;
	// nil when it called none. A recorded sample keeps only how many
	// there were: its calls are empty, as its Text is.
	ToolCalls []ToolCall
	// Inputs is how many inputs an embeddings request embedded, and
	// Dimensions the length of its vectors; 0 for other endpoints.
	Inputs     int
	Dimensions int
	TextEvents int
	Streamed   bool // false for stream=false requests
	// NotSent says the request never reached the connection: its VU was
	// stopped or canceled while waiting to send it (a back-off). It is
	// not a request the server saw, so it is never recorded as a sample.
	NotSent bool
	// Server is the server's own timing of the request, where its answer
	// carries one (llama.cpp's "timings"); nil otherwise.
	Server *ServerTimings
	// TraceID is the W3C trace id the request carried in its traceparent
	// header, 32 lowercase hex digits; "" when trace context was off.
	TraceID string
	// RequestID is the server's own id of the request: the answer's "id"
	// member, else an x-request-id style response header; "" when it
	// gave none.
	RequestID string
	// Span is the server's trace span of the request, joined by trace id
	// (or by RequestID) from the spans the server exported to llmload's
	// trace receiver; nil when none arrived.
	Span *ServerSpan
	// Encode is the client's time to build the request body, before the
	// request was issued and outside every latency; Upload is from t0 to
	// the body's upload, part of TTFT (a large body on a slow link is part
	// of what users wait for) and reported beside it: its last byte
	// written, or for a body of LargeBody bytes or more, where the kernel
	// says, acknowledged by the peer.
	Encode time.Duration
	Upload time.Duration
	// BodyBytes is the request body's length.
	BodyBytes int64
	// Images, Audios and Videos count the media parts sent; AudioIn is
	// the seconds of audio sent (parts and a transcription's file).
	Images, Audios, Videos int
	AudioIn                float64
	// MediaTokens are the prompt tokens of the media parts: the server's
	// prompt_tokens less the client's count of the text, when usage said
	// and media were sent; 0 otherwise.
	MediaTokens int
	// AudioOut is the seconds of audio a speech request got (from its WAV
	// header, or estimated from the bytes for other formats; 0 unknown),
	// and AudioBytes the bytes of it.
	AudioOut   float64
	AudioBytes int64
}

// ServerTimings is a server's own account of one request, as llama.cpp's
// "timings" member gives it: prompt processing, then generation, timed
// inside the server, so llmload's TTFT and TPOT can be held against it
// request by request.
type ServerTimings struct {
	PromptN  int     // prompt tokens processed (prefix-cache hits left out)
	CachedN  int     // prompt tokens served from the prefix cache
	PromptMS float64 // time to process the prompt
	// PredictedN tokens took PredictedMS; PredictedPerTokenMS is
	// PredictedMS/(PredictedN−1) in llama.cpp, the same definition as TPOT.
	PredictedN          int
	PredictedMS         float64
	PredictedPerTokenMS float64
}

// ServerSpan is a server's OpenTelemetry span of one request, as vLLM
// exports its "llm_request" span: what the server did with the request,
// timed inside it. A duration the span did not carry is negative
// (Absent), never 0, which is a measured value.
type ServerSpan struct {
	Service   string // the exporting resource's service.name
	Name      string // the span's name
	RequestID string // gen_ai.request.id
	// Queue is the time the request waited for the scheduler, Prefill
	// the prompt's processing up to the first token, Decode the rest of
	// the generation; TTFT and E2E are the server's, from the request's
	// arrival in it.
	Queue, Prefill, Decode, TTFT, E2E time.Duration
	// PromptTokens and CompletionTokens are the span's usage; -1 absent.
	PromptTokens, CompletionTokens int
}

// Absent is a ServerSpan duration the span did not carry.
const Absent time.Duration = -1

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Err == nil }

// LargeBody is the request body size from which the upload waits for the
// peer's acknowledgement (a kernel's send buffer takes megabytes at once,
// so the write returns long before a slow link has carried the body) and
// enters the stage's upload figure. A smaller body is across within a
// round trip of its write.
const LargeBody = 16 << 10

// Sample is a Result labelled with where it came from. It is what metrics
// aggregate; Text, and the contents of ToolCalls, are dropped before a
// sample is recorded.
type Sample struct {
	Scenario string
	Stage    string
	Tags     map[string]string
	Warmup   bool
	// Dirty is the dirty-data kind of a deliberately malformed request, ""
	// for clean ones. Dirty samples never enter the clean statistics.
	Dirty string
	// Scheduled is the intended start in open-model executors, set only on
	// the first request of an iteration (later requests have no intended
	// start of their own); zero otherwise.
	Scheduled time.Time
	// TraceRecord is the 0-based index of the trace record the sample's
	// iteration replays, plus one (TraceArrival.Record + 1), so
	// that the zero value means "no trace": set on every request of a
	// trace iteration, 0 outside trace scenarios.
	TraceRecord int
	// PrefixAsked is what the request's prompt, built for a target
	// prefix-cache hit rate, asked of the server's cache; zero for every
	// other request.
	PrefixAsked PrefixAsked
	Result
}

// PrefixAsked is the share of a prompt's tokens built to repeat a prefix
// that prompts sent before opened with (llm.synthetic's prefix_hit): the
// first Shared of its Tokens, both counted with the client's tokenizer.
// Zero Tokens means the prompt asked nothing. A sample carries the counts
// rather than the share, so that sources asking different shares sum
// exactly.
type PrefixAsked struct {
	Shared, Tokens int
}

// IterationError is a script error raised inside one iteration.
type IterationError struct {
	Scenario string
	Stage    string
	Warmup   bool
	Message  string // "file:line: message"
}

// StageMark marks a stage window opening or closing.
type StageMark struct {
	Scenario string
	Stage    string
	Index    int     // position of the stage within its scenario
	Target   int     // VUs the stage holds (closed model)
	Rate     float64 // mean target iterations per second over the stage, ramp included (open model); 0 otherwise
	// At is the boundary as scheduled (the scenario's start plus the
	// stages' durations), so a controller that wakes late stretches no
	// window; a cut stage ends when it was cut, a stage of the iteration
	// executors when its work was done.
	At time.Time
	// Late is how long after At the controller marked the boundary: on a
	// busy machine the VU count changed (closed model) that much late.
	Late time.Duration
	// Cut marks a stage that ended before its planned end (Ctrl-C, an
	// aborting threshold): its window is shorter than asked.
	Cut bool
	// Planned is the window's planned length in time-bound executors; 0
	// where the stage ends when its work is done (the iterations executors).
	Planned time.Duration
}

// IterationMark records the start of one iteration.
type IterationMark struct {
	Scenario  string
	Stage     string
	Warmup    bool
	Scheduled time.Time // intended start (open models), zero otherwise
	Started   time.Time
}

// DropMark records an open-model iteration that was due but found no free
// VU: it is dropped and counted, never silently delayed.
type DropMark struct {
	Scenario  string
	Stage     string
	Scheduled time.Time
	// Reason says why no VU could take it: DropMaxVUs, DropGrowing,
	// DropVUFailed, DropStopped or DropParent.
	Reason string
}

// Why an open-model iteration was dropped (DropMark.Reason).
const (
	// DropMaxVUs: every VU was busy and the pool was at max_vus.
	DropMaxVUs = "max_vus"
	// DropGrowing: every VU was busy and the VU being made for it was not
	// ready within the pool's wait bound (executor.PoolWait).
	DropGrowing = "growing"
	// DropVUFailed: every VU was busy and the pool could not grow, since
	// making a VU failed (the failure is reported as a script error).
	DropVUFailed = "vu_failed"
	// DropStopped: a trace session's record still held behind the
	// session's previous one when the run stopped it.
	DropStopped = "stopped"
	// DropParent: a trace record timed by its parent's answer whose parent
	// (or an ancestor) was dropped, or canceled by the graceful stop, so
	// never answered.
	DropParent = "parent_dropped"
)

// Custom metric kinds, as in k6.
const (
	MetricTrend   = "trend"   // a distribution: percentiles, avg, min, max
	MetricCounter = "counter" // a sum, and its rate per second
	MetricRate    = "rate"    // the share of non-zero values
)

// MetricSample is one value of a custom metric, or of the built-in
// "checks" rate (Name "checks", Tags["check"] = the check's name).
type MetricSample struct {
	Name     string
	Kind     string
	Value    float64
	Scenario string
	Stage    string
	Tags     map[string]string
	Warmup   bool
}

// TaskSample is one llm.task: an agent's unit of work, timed whole.
type TaskSample struct {
	Name            string
	Scenario, Stage string
	Tags            map[string]string // the scenario's and the task's tags
	Warmup          bool
	// Start is when the task began (llm.task was called), on the same
	// clock as Result.Start, so that the task is placed in its stage's
	// window as its requests are; zero: Duration before the sink
	// received it.
	Start                     time.Time
	Duration                  time.Duration // wall time: the task's function, from its call to its return (or the error that ended it)
	Calls, Failed             int           // requests sent inside it (nested tasks' and branches' included), and those that failed
	InputTokens, OutputTokens int
	Tool                      time.Duration // time in llm.tool_delay inside it
	Err                       string        // "" when the task's function returned; else the error that ended it (file:line: message)
}

// OK reports whether the task's function returned and none of its
// requests failed.
func (t *TaskSample) OK() bool { return t.Err == "" && t.Failed == 0 }

// Sink receives everything a run measures. Implementations are safe for
// concurrent use and return quickly.
type Sink interface {
	Sample(s Sample)
	IterationError(e IterationError)
	StageStarted(m StageMark)
	StageEnded(m StageMark)
	IterationStarted(m IterationMark)
	Dropped(m DropMark)
	Metric(m MetricSample)
	// Task records one finished llm.task; the sink may keep t.Tags, so
	// the caller must not modify them afterwards.
	Task(t TaskSample)
}

// Iteration tells a VU what it is running and where it belongs.
type Iteration struct {
	Scenario  string
	Stage     string
	Exec      string // the script function to call
	VUID      int    // 1-based, unique within the run
	Iteration int64  // 0-based count of this VU's iterations
	RequestID int64  // unique across the run
	Warmup    bool
	Scheduled time.Time // intended start (open models), zero otherwise
	// Trace is the trace record this iteration replays; nil outside
	// trace scenarios.
	Trace *plan.TraceArrival
}

// VU is one virtual user. It is used by one goroutine at a time.
type VU interface {
	// RunIteration runs one iteration; a returned error is a script error
	// and is counted, the run goes on. It returns promptly once ctx ends.
	RunIteration(ctx context.Context, it Iteration) error
	Close() error
}

// Runner makes VUs. Safe for concurrent use.
type Runner interface {
	NewVU(ctx context.Context, id int) (VU, error)
}

// Lifecycle is implemented by Runners whose scripts may define setup and
// teardown. Setup runs once after the VUs exist and before any load; what
// it returns is handed read-only to every iteration. Teardown runs once
// after the load, also when the run was interrupted.
type Lifecycle interface {
	Setup(ctx context.Context) error
	Teardown(ctx context.Context) error
}

// ClientCheck is llmload's own health over a stage window: whether the
// client itself could have distorted the timings it reports.
type ClientCheck struct {
	CPUPercent float64 `json:"cpu_percent"` // process CPU, % of one core, highest 1 s sample
	Cores      int     `json:"cores"`       // GOMAXPROCS: CPUPercent can reach 100 × Cores
	// SchedLatencyP99MS is the p99 time goroutines waited to run once
	// runnable: the delay between a chunk's arrival on the socket (the
	// netpoller wakes the reader) and the moment it is timestamped.
	SchedLatencyP99MS float64  `json:"sched_latency_p99_ms"`
	GCPauseP99MS      float64  `json:"gc_pause_p99_ms"`
	GCPauseTotalMS    float64  `json:"gc_pause_total_ms"`
	Bound             bool     `json:"client_bound"`
	Reasons           []string `json:"reasons,omitempty"` // why Bound: llmload's own load

	// Whole-machine figures from /proc/stat, so that a machine busy with
	// other processes is told from a busy llmload. MachineMeasured is false
	// where they cannot be read (not Linux): the fields below are then zero
	// and only what the process itself shows is judged.
	MachineMeasured bool `json:"machine_measured,omitempty"`
	MachineCores    int  `json:"machine_cores,omitempty"` // online CPUs of the machine
	// MachineCPUPercent is the busy share of all the machine's cores (0–100,
	// steal excluded), highest 1 s sample; StealPercent the share the
	// hypervisor gave to other guests, highest sample.
	MachineCPUPercent float64 `json:"machine_cpu_percent,omitempty"`
	StealPercent      float64 `json:"steal_percent,omitempty"`
	// RunQueue is the mean number of runnable threads (procs_running),
	// llmload's included but not the one sampling: above MachineCores,
	// threads wait for a CPU.
	RunQueue float64 `json:"run_queue,omitempty"`
	// OwnSharePercent is llmload's share of the CPU the machine used over
	// the window (0–100): low means other processes used it.
	OwnSharePercent float64 `json:"own_share_percent,omitempty"`
	// SaturatedSamples counts the samples in which the machine was nearly
	// saturated while other processes (neither llmload nor a local server)
	// held more than half of its busy CPU.
	SaturatedSamples int `json:"saturated_samples,omitempty"`
	Samples          int `json:"samples,omitempty"` // 1 s samples in the window
	// MachineBusy: other processes (or the hypervisor, or a CPU quota)
	// held the CPU and llmload's own timings show delays, so they may
	// include waits that are neither the server's nor llmload's own work.
	// MachineReasons says why.
	MachineBusy    bool     `json:"machine_busy,omitempty"`
	MachineReasons []string `json:"machine_reasons,omitempty"`
	// Server is the CPU of the target's own processes when they run on
	// this machine, told apart from other processes' because the server's
	// work is what is measured; nil for a remote target, or one whose
	// process was not found.
	Server *ServerCPU `json:"local_server,omitempty"`
}

// ServerCPU is a local server's CPU over a stage window, and the
// machine's busy CPU split among llmload, the server and everything else
// in % of all the machine's cores, means of the window's samples.
type ServerCPU struct {
	CPUPercent     float64 `json:"cpu_percent"` // the server's processes, % of one core, highest 1 s sample
	MachinePercent float64 `json:"machine_percent"`
	OwnPercent     float64 `json:"llmload_percent"`
	ServerPercent  float64 `json:"server_percent"`
	OtherPercent   float64 `json:"other_percent"` // machine − llmload − server, never below 0
	// Disagrees: llmload and the server used more CPU than the machine
	// counted, beyond what tick rounding explains, so the split is unsound.
	Disagrees bool `json:"disagrees,omitempty"`
	// Reasons are delays llmload saw while the local server, not other
	// processes, held the CPU it did not use: information, not a flag,
	// since a server sharing llmload's machine shares its cores.
	Reasons []string `json:"reasons,omitempty"`
}

// Robustness verdicts for dirty-data requests.
const (
	VerdictHandled  = "handled"  // a clean 4xx with an error body
	VerdictDefect   = "defect"   // a 5xx, a timeout, a reset, a hang, a broken stream, a bare 4xx
	VerdictAccepted = "accepted" // a 200: listed, since some malformed inputs are fine to serve
	VerdictCanceled = "canceled" // cut off by the end of the run: no verdict
)

// Verdict judges how a server answered a deliberately malformed request.
func Verdict(r *Result) string {
	switch {
	case r.Err == nil:
		return VerdictAccepted
	case r.Err.Class == ErrCanceled || r.Err.Class == ErrInvalidRequest:
		return VerdictCanceled
	case r.Status >= 400 && r.Status < 500 && r.Err.Message != "":
		return VerdictHandled
	}
	return VerdictDefect
}
