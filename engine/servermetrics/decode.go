package servermetrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// families is one scrape, parsed: metric families by name.
type families map[string]*dto.MetricFamily

// decode parses a /metrics body in the format its Content-Type names:
// OpenMetrics or delimited protobuf when the server says so, else the
// Prometheus text format, which every inference server serves by default.
// Names are validated as UTF-8, a superset of the legacy rules, so that
// vLLM's colons ("vllm:num_requests_running") and quoted UTF-8 names both
// parse.
func decode(body io.Reader, h http.Header) (families, error) {
	format := expfmt.ResponseFormat(h)
	switch format.FormatType() {
	case expfmt.TypeOpenMetrics, expfmt.TypeProtoDelim:
		return decodeAll(expfmt.NewDecoder(body, format))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("not the Prometheus text format: %w", err)
	}
	return fams, nil
}

// decodeAll reads every family a decoder yields; any error fails the whole
// scrape, as a half-read exposition would skew the sums.
func decodeAll(d expfmt.Decoder) (families, error) {
	fams := families{}
	for {
		mf := new(dto.MetricFamily)
		err := d.Decode(mf)
		if errors.Is(err, io.EOF) {
			return fams, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bad metrics exposition: %w", err)
		}
		fams[mf.GetName()] = mf
	}
}
