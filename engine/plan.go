package engine

import "time"

// Executor names, as in k6.
const (
	ExecutorConstantVUs = "constant-vus"
	ExecutorRampingVUs  = "ramping-vus"
)

// Default timeouts and stops.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultTTFTTimeout    = 60 * time.Second
	DefaultIdleTimeout    = 30 * time.Second
	DefaultTotalTimeout   = 10 * time.Minute
	DefaultGracefulStop   = 30 * time.Second
)

// Plan is a whole run, as compiled from a scenario.
type Plan struct {
	Script    string
	Target    Target
	Warmup    Warmup
	Scenarios []Scenario
	Seed      int64
}

// Target is the endpoint under test. An empty BaseURL means the built-in simulator.
type Target struct {
	BaseURL        string
	APIKey         string `json:"-"`
	Model          string
	ConnectTimeout time.Duration
	TTFTTimeout    time.Duration
	IdleTimeout    time.Duration
	TotalTimeout   time.Duration
}

// Warmup runs before the first stage; its samples are excluded from all statistics.
type Warmup struct {
	Requests int           // iterations to run
	Duration time.Duration // or run for this long
}

// Scenario is one executor with its stages.
type Scenario struct {
	Name     string
	Executor string
	Exec     string // script function each iteration calls
	StartVUs int
	Stages   []Stage
	// GracefulStop bounds how long in-flight iterations may finish after the
	// scenario's last stage; those still running are canceled.
	GracefulStop time.Duration
	// GracefulRampDown bounds how long iterations of VUs removed by a
	// stage with fewer VUs may finish.
	GracefulRampDown time.Duration
	Tags             map[string]string
}

// Stage is one measurement window: it steps to Target VUs at its start (or
// ramps linearly over Ramp from the previous target) and holds for Duration.
type Stage struct {
	Name     string
	Target   int
	Duration time.Duration
	Ramp     time.Duration
}

// Duration is the scenario's total stage time.
func (s Scenario) Duration() time.Duration {
	var d time.Duration
	for _, st := range s.Stages {
		d += st.Duration
	}
	return d
}

// MaxVUs is the most VUs any stage of the scenario holds.
func (s Scenario) MaxVUs() int {
	m := s.StartVUs
	for _, st := range s.Stages {
		m = max(m, st.Target)
	}
	return m
}
