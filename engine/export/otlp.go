package export

import (
	"context"
	"time"

	"github.com/llmload/llmload/engine/plan"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// DefaultOTLPPath is the path an OTLP URL without one gets: the OTLP/HTTP
// metrics endpoint of a collector (and of Prometheus' OTLP receiver, which
// lives at /api/v1/otlp/v1/metrics).
const DefaultOTLPPath = "/v1/metrics"

// otlp pushes OTLP/HTTP metrics with the OpenTelemetry Go SDK's exporter,
// which encodes the protobuf and retries. The series are the recorder's,
// converted on each push: cumulative sums from the run's start, explicit
// bucket histograms (the classic buckets), or exponential histograms when
// native (client_golang's native schema is OTLP's scale).
type otlp struct {
	exp    *otlpmetrichttp.Exporter
	native bool
	res    *resource.Resource
	start  time.Time
}

func newOTLP(t plan.ExportTarget, cfg Config) (*otlp, error) {
	u, err := pushURL(t.URL, DefaultOTLPPath)
	if err != nil {
		return nil, err
	}
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpointURL(u), otlpmetrichttp.WithHTTPClient(client(cfg)),
		otlpmetrichttp.WithTimeout(cfg.Timeout),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: cfg.Timeout / 2}),
	}
	exp, err := otlpmetrichttp.New(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	// The semantic conventions' service.name and service.version, as k6
	// names itself; run_id is on every data point too, as a label.
	res := resource.NewSchemaless(attribute.String("service.name", "llmload"),
		attribute.String("service.version", cfg.Version), attribute.String(LabelRunID, cfg.RunID))
	return &otlp{exp: exp, native: t.Native, res: res, start: cfg.Start}, nil
}

func (o *otlp) push(ctx context.Context, fams []*dto.MetricFamily, now time.Time) error {
	return o.exp.Export(ctx, o.metrics(fams, now))
}

// metrics converts a gathering into OTLP's data model.
func (o *otlp) metrics(fams []*dto.MetricFamily, now time.Time) *metricdata.ResourceMetrics {
	sm := metricdata.ScopeMetrics{Scope: instrumentation.Scope{Name: "github.com/llmload/llmload/engine/export"}}
	for _, f := range fams {
		m := metricdata.Metrics{Name: f.GetName(), Description: f.GetHelp()}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			m.Data = o.sum(f, now)
		case dto.MetricType_GAUGE:
			m.Data = gauge(f, now)
		case dto.MetricType_HISTOGRAM:
			m.Unit = "s"
			if o.native {
				m.Data = o.exponential(f, now)
			} else {
				m.Data = o.explicit(f, now)
			}
		default:
			continue
		}
		sm.Metrics = append(sm.Metrics, m)
	}
	return &metricdata.ResourceMetrics{Resource: o.res, ScopeMetrics: []metricdata.ScopeMetrics{sm}}
}

// attrs are a series' labels as attributes, empty values kept: "" is a
// value the contract names (error_class of a success).
func attrs(m *dto.Metric) attribute.Set {
	kv := make([]attribute.KeyValue, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		kv = append(kv, attribute.String(l.GetName(), l.GetValue()))
	}
	return attribute.NewSet(kv...)
}

func (o *otlp) sum(f *dto.MetricFamily, now time.Time) metricdata.Sum[int64] {
	s := metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
	for _, m := range f.GetMetric() {
		s.DataPoints = append(s.DataPoints, metricdata.DataPoint[int64]{Attributes: attrs(m), StartTime: o.start,
			Time: now, Value: int64(m.GetCounter().GetValue())})
	}
	return s
}

func gauge(f *dto.MetricFamily, now time.Time) metricdata.Gauge[float64] {
	var g metricdata.Gauge[float64]
	for _, m := range f.GetMetric() {
		g.DataPoints = append(g.DataPoints, metricdata.DataPoint[float64]{Attributes: attrs(m), Time: now,
			Value: m.GetGauge().GetValue()})
	}
	return g
}

// explicit converts classic buckets: client_golang's are cumulative,
// OTLP's per bucket, with one more for the values above the last bound.
func (o *otlp) explicit(f *dto.MetricFamily, now time.Time) metricdata.Histogram[float64] {
	h := metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality}
	for _, m := range f.GetMetric() {
		ph := m.GetHistogram()
		dp := metricdata.HistogramDataPoint[float64]{Attributes: attrs(m), StartTime: o.start, Time: now,
			Count: ph.GetSampleCount(), Sum: ph.GetSampleSum()}
		var below uint64
		for _, b := range ph.GetBucket() {
			dp.Bounds = append(dp.Bounds, b.GetUpperBound())
			dp.BucketCounts = append(dp.BucketCounts, b.GetCumulativeCount()-below)
			below = b.GetCumulativeCount()
		}
		dp.BucketCounts = append(dp.BucketCounts, ph.GetSampleCount()-below)
		h.DataPoints = append(h.DataPoints, dp)
	}
	return h
}

// exponential converts native histograms. Prometheus' bucket i holds
// (base^(i-1), base^i], OTLP's bucket i holds (base^i, base^(i+1)]: the
// same buckets, offset by one.
func (o *otlp) exponential(f *dto.MetricFamily, now time.Time) metricdata.ExponentialHistogram[float64] {
	h := metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality}
	for _, m := range f.GetMetric() {
		ph := m.GetHistogram()
		h.DataPoints = append(h.DataPoints, metricdata.ExponentialHistogramDataPoint[float64]{
			Attributes: attrs(m), StartTime: o.start, Time: now,
			Count: ph.GetSampleCount(), Sum: ph.GetSampleSum(), Scale: ph.GetSchema(),
			ZeroCount: ph.GetZeroCount(), ZeroThreshold: ph.GetZeroThreshold(),
			PositiveBucket: expBuckets(ph.GetPositiveSpan(), ph.GetPositiveDelta()),
			NegativeBucket: expBuckets(ph.GetNegativeSpan(), ph.GetNegativeDelta()),
		})
	}
	return h
}

// expBuckets expands Prometheus' spans of delta-encoded counts into OTLP's
// dense run of counts from an offset.
func expBuckets(spans []*dto.BucketSpan, deltas []int64) metricdata.ExponentialBucket {
	var out metricdata.ExponentialBucket
	if len(spans) == 0 {
		return out
	}
	out.Offset = spans[0].GetOffset() - 1
	var count int64
	d := 0
	for i, s := range spans {
		if i > 0 {
			for range s.GetOffset() { // a gap of empty buckets
				out.Counts = append(out.Counts, 0)
			}
		}
		for range s.GetLength() {
			if d < len(deltas) {
				count += deltas[d]
				d++
			}
			out.Counts = append(out.Counts, uint64(max(count, 0)))
		}
	}
	return out
}
