package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/redact"
	dto "github.com/prometheus/client_model/go"
)

// Defaults of the pushes and of the final scrape.
const (
	// DefaultTimeout bounds one push, its retries included, so a slow
	// receiver delays only the next push of its own output.
	DefaultTimeout = 5 * time.Second
	// DefaultScrapeWait is how long --listen keeps serving once the run
	// has ended, waiting for a scrape of the final counts.
	DefaultScrapeWait = 15 * time.Second
)

// Config configures an Exporter.
type Config struct {
	// Export says where to; Export.Every 0 is DefaultExportEvery.
	Export plan.Export
	// RunID labels every series; required.
	RunID string
	// Start is the run's start: the start time of the OTLP cumulative sums.
	Start time.Time
	// Open says which scenarios are open models, whose stage targets are
	// rates rather than VUs.
	Open map[string]bool
	// Load, when set, gives the in-flight iterations and active VUs per
	// scenario, read on each push and scrape.
	Load func() []Load
	// Log receives the exporter's messages (a first failure, the wait for
	// a final scrape), one line each and one call at a time; nil drops
	// them.
	Log func(format string, a ...any)
	// Version is llmload's version, in the OTLP resource.
	Version string
	// Timeout bounds one push (DefaultTimeout when 0); ScrapeWait the wait
	// for a final scrape (DefaultScrapeWait when 0).
	Timeout    time.Duration
	ScrapeWait time.Duration
	// Client sends the pushes; nil makes one.
	Client *http.Client
}

// Exporter is an engine.Sink observer: it records what the run measures
// and streams it to its outputs. Its Sink methods are safe for concurrent
// use and only touch memory; New, Start and Close are called once each,
// in that order, from one goroutine.
type Exporter struct {
	*recorder
	cfg     Config
	outputs []*output
	listen  *listener

	stop    context.CancelFunc
	ctx     context.Context
	wg      sync.WaitGroup
	closeMu sync.Mutex
	health  []Health
}

// New checks cfg, makes the series and binds the --listen address, so that
// a port in use fails the run before any load.
func New(cfg Config) (*Exporter, error) {
	e := cfg.Export
	if cfg.RunID == "" {
		return nil, errors.New("export: no run id")
	}
	if err := CheckTags(e.Tags); err != nil {
		return nil, fmt.Errorf("options.export.tags: %w", err)
	}
	cfg.Export.Every = cmp.Or(e.Every, plan.DefaultExportEvery)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.ScrapeWait = cmp.Or(cfg.ScrapeWait, DefaultScrapeWait)
	if cfg.Client == nil {
		cfg.Client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if log := cfg.Log; log != nil {
		// Outputs fail on goroutines of their own: one line at a time.
		var mu sync.Mutex
		cfg.Log = func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			log(format, a...)
		}
	}
	native := e.ListenNative
	for _, t := range e.Targets {
		native = native || t.Native
	}
	x := &Exporter{recorder: newRecorder(cfg.RunID, slices.Clone(e.Tags), cfg.Open, native), cfg: cfg}
	for _, t := range e.Targets {
		o, err := x.newOutput(t)
		if err != nil {
			return nil, err
		}
		x.outputs = append(x.outputs, o)
	}
	if e.Listen != "" {
		l, err := newListener(e.Listen, x)
		if err != nil {
			return nil, err
		}
		x.listen = l
	}
	return x, nil
}

// newOutput makes the pusher of t.
func (x *Exporter) newOutput(t plan.ExportTarget) (*output, error) {
	var p pusher
	var err error
	switch t.Kind {
	case plan.ExportPrometheusRW:
		p, err = newRemoteWrite(t, x.cfg)
	case plan.ExportOTLP:
		p, err = newOTLP(t, x.cfg)
	default:
		err = fmt.Errorf("unknown kind (want %s)", plan.ExportKinds())
	}
	if err != nil {
		return nil, fmt.Errorf("export %s=%s: %w", t.Kind, redact.URL(t.URL), err)
	}
	return &output{kind: t.Kind, target: redact.URL(t.URL), p: p, redact: redactor(t.URL, x.cfg.Export.Headers)}, nil
}

// ListenAddr is the address --listen serves on ("" without it): the
// actual port when the flag asked for port 0.
func (x *Exporter) ListenAddr() string {
	if x.listen == nil {
		return ""
	}
	return x.listen.addr()
}

// Start starts the pushes, every Export.Every, and the /metrics server.
func (x *Exporter) Start() {
	x.ctx, x.stop = context.WithCancel(context.Background())
	for _, o := range x.outputs {
		x.wg.Go(func() { x.loop(o) })
	}
	if x.listen != nil {
		x.listen.start()
	}
}

// loop pushes o every interval until Close. A ticker drops the ticks a
// slow push overran, so pushes never pile up.
func (x *Exporter) loop(o *output) {
	t := time.NewTicker(x.cfg.Export.Every)
	defer t.Stop()
	for {
		select {
		case <-x.ctx.Done():
			return
		case <-t.C:
			x.push(x.ctx, o, x.cfg.Timeout)
		}
	}
}

// push sends the current values to o and books the outcome. A push cut
// short by Close is not booked: the final push supersedes it. One that
// landed before Close is, though Close came before it returned.
func (x *Exporter) push(parent context.Context, o *output, timeout time.Duration) {
	fams, err := x.gather()
	if err == nil {
		ctx, cancel := context.WithTimeout(parent, timeout)
		err = o.p.push(ctx, fams, time.Now())
		cancel()
	}
	if err != nil && parent.Err() != nil {
		return
	}
	if o.book(err) && x.cfg.Log != nil {
		x.cfg.Log("WARNING: export %s %s: %s (the run goes on; failures are counted in the summary)", o.kind, o.target, o.lastError())
	}
}

// gather reads every series, the load gauges refreshed first.
func (x *Exporter) gather() ([]*dto.MetricFamily, error) {
	x.refresh()
	return x.reg.Gather()
}

// refresh sets the load gauges from Config.Load, until the final counts
// are in place.
func (x *Exporter) refresh() {
	if x.cfg.Load != nil && !x.frozen.Load() {
		x.setLoad(x.cfg.Load())
	}
}

// Close ends the export once the run's load has ended: later events are
// left out, the final counts are pushed to every output (in parallel,
// each within Config.Timeout), and --listen serves until a scrape has read
// them (at most Config.ScrapeWait). It returns each output's health;
// calling it again returns the same.
func (x *Exporter) Close() []Health { return x.close(x.cfg.Timeout, x.cfg.ScrapeWait) }

// AbortTimeout bounds the final push of an aborted run.
const AbortTimeout = time.Second

// Abort is Close for a process about to exit (a second interrupt): the
// final push is bounded by AbortTimeout and no scrape is waited for.
func (x *Exporter) Abort() []Health { return x.close(AbortTimeout, 0) }

func (x *Exporter) close(timeout, scrapeWait time.Duration) []Health {
	x.closeMu.Lock()
	defer x.closeMu.Unlock()
	if x.health != nil {
		return x.health
	}
	if x.stop == nil { // never started
		x.Start()
	}
	x.refresh()
	x.frozen.Store(true)
	x.stop()
	x.wg.Wait()
	var wg sync.WaitGroup
	for _, o := range x.outputs {
		wg.Go(func() { x.push(context.Background(), o, timeout) })
	}
	wg.Wait()
	x.health = make([]Health, 0, len(x.outputs)+1)
	for _, o := range x.outputs {
		x.health = append(x.health, o.health())
	}
	if x.listen != nil {
		x.health = append(x.health, x.listen.finish(scrapeWait, x.cfg.Log))
	}
	return x.health
}

// Refusals are the exported tags that took too many values.
func (x *Exporter) Refusals() []Refusal { return x.limit.refusals() }

// Warnings say what of the export failed: outputs that failed pushes, a
// final scrape that never came, tags refused. Call after Close.
func (x *Exporter) Warnings() []string {
	var out []string
	for _, h := range x.Close() {
		if w := h.Warning(); w != "" {
			out = append(out, w)
		}
	}
	for _, r := range x.Refusals() {
		out = append(out, r.String())
	}
	return out
}
