package export

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/llmload/llmload/engine/plan"
	"github.com/prometheus/client_golang/exp/api/remote"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"
)

// DefaultRemoteWritePath is the path a remote-write URL without one gets:
// Prometheus' receiver (--web.enable-remote-write-receiver).
const DefaultRemoteWritePath = "/api/v1/write"

// remoteWrite pushes Prometheus remote-write 1.0 (prometheus.WriteRequest,
// snappy-compressed) through client_golang's remote API, which frames,
// compresses, sets the protocol's headers and retries 5xx answers.
type remoteWrite struct {
	api    *remote.API
	native bool
}

func newRemoteWrite(t plan.ExportTarget, cfg Config) (*remoteWrite, error) {
	u, err := pushURL(t.URL, DefaultRemoteWritePath)
	if err != nil {
		return nil, err
	}
	api, err := remote.NewAPI(u, remote.WithAPIPath(""), remote.WithAPIHTTPClient(client(cfg)),
		remote.WithAPIBackoff(remote.BackoffConfig{Min: 250 * time.Millisecond, Max: time.Second, MaxRetries: 2}))
	if err != nil {
		return nil, err
	}
	return &remoteWrite{api: api, native: t.Native}, nil
}

// pushURL checks raw is an http(s) URL with a host and gives it path def
// when it has none.
func pushURL(raw, def string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("not a URL") // url.Error quotes it, credentials and all
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("want an http:// or https:// URL, not %q", u.Scheme+"://")
	}
	if u.Host == "" {
		return "", fmt.Errorf("no host in the URL")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = def
	}
	return u.String(), nil
}

func (w *remoteWrite) push(ctx context.Context, fams []*dto.MetricFamily, now time.Time) error {
	msg := writeRequest{b: encodeWriteRequest(fams, now.UnixMilli(), w.native)}
	_, err := w.api.Write(ctx, remote.WriteV1MessageType, msg)
	return err
}

// writeRequest is an encoded prometheus.WriteRequest; Size and
// MarshalToSizedBuffer are what the remote API asks of a gogo-style
// message.
type writeRequest struct{ b []byte }

func (m writeRequest) Size() int { return len(m.b) }

func (m writeRequest) MarshalToSizedBuffer(dst []byte) (int, error) { return copy(dst, m.b), nil }

// The field numbers of remote-write 1.0's protobuf (prompb types.proto and
// remote.proto).
const (
	fWriteTimeseries = 1 // WriteRequest.timeseries
	fWriteMetadata   = 3 // WriteRequest.metadata
	fSeriesLabels    = 1 // TimeSeries.labels
	fSeriesSamples   = 2
	fSeriesHists     = 4
	fLabelName       = 1
	fLabelValue      = 2
	fSampleValue     = 1
	fSampleTime      = 2
	fHistCountInt    = 1
	fHistSum         = 3
	fHistSchema      = 4
	fHistZeroThresh  = 5
	fHistZeroInt     = 6
	fHistNegSpans    = 8
	fHistNegDeltas   = 9
	fHistPosSpans    = 11
	fHistPosDeltas   = 12
	fHistTime        = 15
	fSpanOffset      = 1
	fSpanLength      = 2
	fMetaType        = 1
	fMetaFamily      = 2
	fMetaHelp        = 4
)

// Remote-write 1.0's MetricMetadata.MetricType values.
const (
	metaCounter   = 1
	metaGauge     = 2
	metaHistogram = 3
)

// encodeWriteRequest encodes every series of fams at time ms: counters and
// gauges as samples, histograms as native histograms when native (what
// Prometheus takes with --enable-feature=native-histograms) and as
// classic _bucket, _sum and _count series otherwise, with each family's
// type and help as metadata.
func encodeWriteRequest(fams []*dto.MetricFamily, ms int64, native bool) []byte {
	var b, ts []byte
	for _, f := range fams {
		name := f.GetName()
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				ts = sampleSeries(ts[:0], name, "", "", m, m.GetCounter().GetValue(), ms)
				b = protowire.AppendTag(b, fWriteTimeseries, protowire.BytesType)
				b = protowire.AppendBytes(b, ts)
			case dto.MetricType_GAUGE:
				ts = sampleSeries(ts[:0], name, "", "", m, m.GetGauge().GetValue(), ms)
				b = protowire.AppendTag(b, fWriteTimeseries, protowire.BytesType)
				b = protowire.AppendBytes(b, ts)
			case dto.MetricType_HISTOGRAM:
				b = appendHistogram(b, name, m, ms, native)
			}
		}
		b = appendMetadata(b, f)
	}
	return b
}

// appendHistogram appends m's series: one native histogram, or a series
// per classic bucket (+Inf included) and the sum and count.
func appendHistogram(b []byte, name string, m *dto.Metric, ms int64, native bool) []byte {
	h := m.GetHistogram()
	if native {
		ts := appendLabels(nil, name, "", "", m)
		ts = protowire.AppendTag(ts, fSeriesHists, protowire.BytesType)
		ts = protowire.AppendBytes(ts, nativeHistogram(h, ms))
		b = protowire.AppendTag(b, fWriteTimeseries, protowire.BytesType)
		return protowire.AppendBytes(b, ts)
	}
	series := func(suffix, le string, v float64) {
		ts := sampleSeries(nil, name+suffix, "le", le, m, v, ms)
		b = protowire.AppendTag(b, fWriteTimeseries, protowire.BytesType)
		b = protowire.AppendBytes(b, ts)
	}
	for _, bk := range h.GetBucket() {
		series("_bucket", formatLe(bk.GetUpperBound()), float64(bk.GetCumulativeCount()))
	}
	series("_bucket", "+Inf", float64(h.GetSampleCount()))
	series("_sum", "", h.GetSampleSum())
	series("_count", "", float64(h.GetSampleCount()))
	return b
}

// formatLe writes a bucket bound as Prometheus' own text format does.
func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return fmt.Sprint(v)
}

// sampleSeries appends a TimeSeries of one sample; extra, when set, is one
// more label (le).
func sampleSeries(ts []byte, name, extra, extraValue string, m *dto.Metric, v float64, ms int64) []byte {
	ts = appendLabels(ts, name, extra, extraValue, m)
	var s []byte
	s = protowire.AppendTag(s, fSampleValue, protowire.Fixed64Type)
	s = protowire.AppendFixed64(s, math.Float64bits(v))
	s = protowire.AppendTag(s, fSampleTime, protowire.VarintType)
	s = protowire.AppendVarint(s, uint64(ms))
	ts = protowire.AppendTag(ts, fSeriesSamples, protowire.BytesType)
	return protowire.AppendBytes(ts, s)
}

// appendLabels appends the series' labels sorted by name, as the protocol
// requires, __name__ first; a label with an empty value is left out,
// since Prometheus takes an empty label for an absent one.
func appendLabels(ts []byte, name, extra, extraValue string, m *dto.Metric) []byte {
	type pair struct{ n, v string }
	pairs := make([]pair, 0, len(m.GetLabel())+2)
	pairs = append(pairs, pair{"__name__", name})
	if extra != "" {
		pairs = append(pairs, pair{extra, extraValue})
	}
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" {
			pairs = append(pairs, pair{l.GetName(), l.GetValue()})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.n, b.n) })
	for _, p := range pairs {
		var l []byte
		l = protowire.AppendTag(l, fLabelName, protowire.BytesType)
		l = protowire.AppendString(l, p.n)
		l = protowire.AppendTag(l, fLabelValue, protowire.BytesType)
		l = protowire.AppendString(l, p.v)
		ts = protowire.AppendTag(ts, fSeriesLabels, protowire.BytesType)
		ts = protowire.AppendBytes(ts, l)
	}
	return ts
}

// nativeHistogram encodes a client_golang native histogram as a
// remote-write Histogram: the two share their schema, spans and deltas.
func nativeHistogram(h *dto.Histogram, ms int64) []byte {
	var b []byte
	b = protowire.AppendTag(b, fHistCountInt, protowire.VarintType)
	b = protowire.AppendVarint(b, h.GetSampleCount())
	b = protowire.AppendTag(b, fHistSum, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(h.GetSampleSum()))
	b = protowire.AppendTag(b, fHistSchema, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(int64(h.GetSchema())))
	b = protowire.AppendTag(b, fHistZeroThresh, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(h.GetZeroThreshold()))
	b = protowire.AppendTag(b, fHistZeroInt, protowire.VarintType)
	b = protowire.AppendVarint(b, h.GetZeroCount())
	b = appendSpans(b, fHistNegSpans, fHistNegDeltas, h.GetNegativeSpan(), h.GetNegativeDelta())
	b = appendSpans(b, fHistPosSpans, fHistPosDeltas, h.GetPositiveSpan(), h.GetPositiveDelta())
	b = protowire.AppendTag(b, fHistTime, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(ms))
}

// appendSpans appends the spans and, packed, the zigzag deltas.
func appendSpans(b []byte, spanField, deltaField protowire.Number, spans []*dto.BucketSpan, deltas []int64) []byte {
	for _, s := range spans {
		var sb []byte
		sb = protowire.AppendTag(sb, fSpanOffset, protowire.VarintType)
		sb = protowire.AppendVarint(sb, protowire.EncodeZigZag(int64(s.GetOffset())))
		sb = protowire.AppendTag(sb, fSpanLength, protowire.VarintType)
		sb = protowire.AppendVarint(sb, uint64(s.GetLength()))
		b = protowire.AppendTag(b, spanField, protowire.BytesType)
		b = protowire.AppendBytes(b, sb)
	}
	if len(deltas) == 0 {
		return b
	}
	var packed []byte
	for _, d := range deltas {
		packed = protowire.AppendVarint(packed, protowire.EncodeZigZag(d))
	}
	b = protowire.AppendTag(b, deltaField, protowire.BytesType)
	return protowire.AppendBytes(b, packed)
}

// appendMetadata appends f's type and help, so that a receiver knows a
// counter from a gauge.
func appendMetadata(b []byte, f *dto.MetricFamily) []byte {
	typ := uint64(metaGauge)
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		typ = metaCounter
	case dto.MetricType_HISTOGRAM:
		typ = metaHistogram
	}
	var m []byte
	m = protowire.AppendTag(m, fMetaType, protowire.VarintType)
	m = protowire.AppendVarint(m, typ)
	m = protowire.AppendTag(m, fMetaFamily, protowire.BytesType)
	m = protowire.AppendString(m, f.GetName())
	m = protowire.AppendTag(m, fMetaHelp, protowire.BytesType)
	m = protowire.AppendString(m, f.GetHelp())
	b = protowire.AppendTag(b, fWriteMetadata, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// CheckURL checks a push URL: http or https, with a host. The error never
// repeats the URL, which may carry credentials.
func CheckURL(raw string) error {
	_, err := pushURL(raw, "/")
	return err
}
