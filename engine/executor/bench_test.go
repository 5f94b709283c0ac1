package executor

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/plan"
)

// lagSink keeps only schedule lags, so the sink costs the scheduler little.
type lagSink struct {
	mu      sync.Mutex
	lags    []time.Duration
	dropped int
}

func (s *lagSink) Sample(engine.Sample)                 {}
func (s *lagSink) Metric(engine.MetricSample)           {}
func (s *lagSink) Task(engine.TaskSample)               {}
func (s *lagSink) IterationError(engine.IterationError) {}
func (s *lagSink) StageStarted(engine.StageMark)        {}
func (s *lagSink) StageEnded(engine.StageMark)          {}
func (s *lagSink) IterationStarted(m engine.IterationMark) {
	s.mu.Lock()
	s.lags = append(s.lags, m.Started.Sub(m.Scheduled))
	s.mu.Unlock()
}
func (s *lagSink) Dropped(engine.DropMark) {
	s.mu.Lock()
	s.dropped++
	s.mu.Unlock()
}

// nopRunner makes VUs whose iterations do nothing and record nothing, so
// the benchmark measures the executor alone.
type nopRunner struct{}

type nopVU struct{}

func (nopRunner) NewVU(context.Context, int) (engine.VU, error)    { return nopVU{}, nil }
func (nopVU) RunIteration(context.Context, engine.Iteration) error { return nil }
func (nopVU) Close() error                                         { return nil }

func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

// BenchmarkArrivalScheduler runs a constant-arrival-rate scenario with a
// no-op VU for a few seconds per op and reports the achieved rate and the
// schedule lag (Started − Scheduled) percentiles.
func BenchmarkArrivalScheduler(b *testing.B) {
	const duration = 3 * time.Second
	for _, arrival := range []string{plan.ArrivalConstant, plan.ArrivalPoisson} {
		for _, rate := range []float64{2000, 5000} {
			b.Run(fmt.Sprintf("%s/%.0f", arrival, rate), func(b *testing.B) {
				sc := openScenario(arrival, plan.Stage{Name: "bench", Rate: rate, Duration: duration})
				sc.PreAllocatedVUs, sc.MaxVUsCap = 50, 50
				sink := &lagSink{lags: make([]time.Duration, 0, int(rate*duration.Seconds())*2)}
				var mallocs uint64
				for range b.N {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					if err := New(plan.Plan{Seed: 1, Scenarios: []plan.Scenario{sc}}, nopRunner{}, sink).Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					runtime.ReadMemStats(&after)
					mallocs += after.Mallocs - before.Mallocs
				}
				secs := duration.Seconds() * float64(b.N)
				b.ReportMetric(float64(len(sink.lags))/secs, "iters/s")
				b.ReportMetric(float64(sink.dropped)/secs, "drops/s")
				b.ReportMetric(float64(mallocs)/float64(len(sink.lags)), "allocs/iter")
				b.ReportMetric(float64(percentile(sink.lags, 0.5).Microseconds()), "lag-p50-µs")
				b.ReportMetric(float64(percentile(sink.lags, 0.99).Microseconds()), "lag-p99-µs")
				b.ReportMetric(float64(percentile(sink.lags, 0.999).Microseconds()), "lag-p99.9-µs")
			})
		}
	}
}
