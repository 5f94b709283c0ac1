package export

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/snappy"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// rwSeries is one decoded remote-write time series.
type rwSeries struct {
	labels map[string]string
	value  float64 // its last sample
	hist   *rwHist // a native histogram
}

// rwHist is the part of a native histogram the tests check.
type rwHist struct {
	count, zero uint64
	sum         float64
	schema      int32
	buckets     uint64 // the positive buckets' counts, added up
}

// rwReceiver is an in-test Prometheus remote-write receiver: it decodes
// each push (snappy, then prometheus.WriteRequest) and keeps the last.
type rwReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	pushes  int
	last    []rwSeries
	status  int // answer with this status when nonzero
	headers http.Header
}

func newRWReceiver(t *testing.T) *rwReceiver {
	r := &rwReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *rwReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = req.Header.Clone()
	if r.status != 0 {
		http.Error(w, "scripted failure", r.status)
		return
	}
	body, _ := io.ReadAll(req.Body)
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	series, err := decodeWriteRequest(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.pushes++
	r.last = series
	w.WriteHeader(http.StatusNoContent)
}

// snapshot returns the pushes so far and the last push's series.
func (r *rwReceiver) snapshot() (int, []rwSeries) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pushes, r.last
}

// fields walks a message's fields, calling f with each field's number,
// type and raw value (bytes for length-delimited, else the varint or
// fixed value in v).
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("field %d: unexpected wire type %d", num, typ)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}

func decodeWriteRequest(b []byte) ([]rwSeries, error) {
	var out []rwSeries
	err := fields(b, func(num protowire.Number, _ protowire.Type, _ uint64, data []byte) error {
		if num != 1 {
			return nil // metadata
		}
		s, err := decodeSeries(data)
		out = append(out, s)
		return err
	})
	return out, err
}

func decodeSeries(b []byte) (rwSeries, error) {
	s := rwSeries{labels: map[string]string{}}
	var names []string
	err := fields(b, func(num protowire.Number, _ protowire.Type, _ uint64, data []byte) error {
		switch num {
		case 1:
			var name, value string
			err := fields(data, func(n protowire.Number, _ protowire.Type, _ uint64, d []byte) error {
				if n == 1 {
					name = string(d)
				} else {
					value = string(d)
				}
				return nil
			})
			s.labels[name] = value
			names = append(names, name)
			return err
		case 2:
			return fields(data, func(n protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				if n == 1 {
					s.value = math.Float64frombits(v)
				}
				return nil
			})
		case 4:
			h, err := decodeHist(data)
			s.hist = &h
			return err
		}
		return nil
	})
	if !sort.StringsAreSorted(names) {
		return s, fmt.Errorf("labels not sorted: %v", names)
	}
	return s, err
}

func decodeHist(b []byte) (rwHist, error) {
	var h rwHist
	err := fields(b, func(num protowire.Number, _ protowire.Type, v uint64, data []byte) error {
		switch num {
		case 1:
			h.count = v
		case 3:
			h.sum = math.Float64frombits(v)
		case 4:
			h.schema = int32(protowire.DecodeZigZag(v))
		case 6:
			h.zero = v
		case 12:
			var count int64
			for len(data) > 0 {
				d, n := protowire.ConsumeVarint(data)
				if n < 0 {
					return protowire.ParseError(n)
				}
				data = data[n:]
				count += protowire.DecodeZigZag(d)
				h.buckets += uint64(count)
			}
		}
		return nil
	})
	return h, err
}

// find returns the value of the series named name whose labels include
// want, summed over every such series (so a test names only what it
// checks), and how many series matched.
func find(series []rwSeries, name string, want map[string]string) (float64, int) {
	var sum float64
	n := 0
	for _, s := range series {
		if s.labels["__name__"] != name || !matches(s.labels, want) {
			continue
		}
		sum += s.value
		n++
	}
	return sum, n
}

func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// otlpReceiver is an in-test OTLP/HTTP receiver decoding with the
// OpenTelemetry protobuf types.
type otlpReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	pushes int
	last   *colmetrics.ExportMetricsServiceRequest
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		msg := &colmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(body, msg); err != nil || !strings.HasSuffix(req.URL.Path, DefaultOTLPPath) {
			http.Error(w, fmt.Sprint(err, req.URL.Path), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.pushes++
		r.last = msg
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// metric returns the last push's metric named name.
func (r *otlpReceiver) metric(name string) *metricspb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	for _, rm := range r.last.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() == name {
					return m
				}
			}
		}
	}
	return nil
}

// attrsMatch reports whether a data point's attributes include want.
func attrsMatch(kvs interface {
	GetAttributes() []*commonpb.KeyValue
}, want map[string]string) bool {
	got := map[string]string{}
	for _, kv := range kvs.GetAttributes() {
		got[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return matches(got, want)
}
