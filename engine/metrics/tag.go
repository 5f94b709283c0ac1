package metrics

import "github.com/llmload/llmload/engine"

// Caps of the per-tag breakdown, so that a script tagging requests with
// endless distinct keys or values (an ID, a timestamp) cannot exhaust
// memory.
const (
	// MaxTagValues is how many distinct values of one tag key a stage
	// breaks down; requests with further values share OtherTagValue.
	MaxTagValues = 20
	// MaxTagKeys is how many distinct tag keys a stage breaks down;
	// further keys are left out and counted in StageSummary.TagKeysOverflow.
	MaxTagKeys = 20
)

// OtherTagValue names the entry of a tag key that gathers the requests
// whose value came after the first MaxTagValues. (A script's own value
// spelled the same shares the entry.)
const OtherTagValue = "(other)"

// TagSummary is the requests of one stage carrying one tag value: counts
// and the latencies of the successful ones. TTFT and E2E carry histograms.
type TagSummary struct {
	Requests int64 `json:"requests"` // OK + Failed
	OK       int64 `json:"ok"`
	Failed   int64 `json:"failed"`
	TTFT     Dist  `json:"ttft"`
	TPOT     Dist  `json:"tpot"`
	E2E      Dist  `json:"e2e"`
}

// tagBreakdown accumulates a stage's requests per user tag key and value.
// Owned by the aggregator; after the first request of a value, recording
// allocates nothing.
type tagBreakdown struct {
	keys     map[string]map[string]*tagCell
	overflow int64 // (request, key) pairs beyond MaxTagKeys
}

// tagCell is one tag value's share of a stage. Its histograms are sparse:
// a stage may have hundreds of these.
type tagCell struct {
	requests, failed int64
	ttft, tpot, e2e  recorder
}

// reservedTag reports whether a tag key is a label llmload sets itself
// rather than a user tag: those have their own breakdowns.
func reservedTag(key string) bool {
	return key == "scenario" || key == "stage" || key == "check"
}

// add records one clean request under each of its user tags.
func (b *tagBreakdown) add(e *event) {
	for key, value := range e.tags {
		if reservedTag(key) {
			continue
		}
		if c := b.cell(key, value); c != nil {
			c.add(e)
		}
	}
}

// cell finds or makes the cell of a key and value, within the caps; nil
// when the key is beyond MaxTagKeys.
func (b *tagBreakdown) cell(key, value string) *tagCell {
	values, ok := b.keys[key]
	if !ok {
		if len(b.keys) >= MaxTagKeys {
			b.overflow++
			return nil
		}
		if b.keys == nil {
			b.keys = map[string]map[string]*tagCell{}
		}
		values = map[string]*tagCell{}
		b.keys[key] = values
	}
	c, ok := values[value]
	if ok {
		return c
	}
	if len(values) >= MaxTagValues {
		if c, ok = values[OtherTagValue]; ok {
			return c
		}
		value = OtherTagValue
	}
	c = &tagCell{
		ttft: newRecorder(sparseDurationGeo),
		tpot: newRecorder(sparseDurationGeo),
		e2e:  newRecorder(sparseDurationGeo),
	}
	values[value] = c
	return c
}

func (c *tagCell) add(e *event) {
	c.requests++
	if e.failed {
		c.failed++
		return
	}
	c.ttft.recordSet(e.ttft)
	c.tpot.recordSet(e.tpot)
	c.e2e.recordSet(e.e2e)
}

// summary renders the breakdown; nil when no request carried a user tag.
func (b *tagBreakdown) summary() map[string]map[string]TagSummary {
	if len(b.keys) == 0 {
		return nil
	}
	out := make(map[string]map[string]TagSummary, len(b.keys))
	for key, values := range b.keys {
		vs := make(map[string]TagSummary, len(values))
		for value, c := range values {
			vs[value] = c.summary()
		}
		out[key] = vs
	}
	return out
}

func (c *tagCell) summary() TagSummary {
	return TagSummary{
		Requests: c.requests, OK: c.requests - c.failed, Failed: c.failed,
		TTFT: c.ttft.t.distWithHistogram(),
		TPOT: c.tpot.t.dist(),
		E2E:  c.e2e.t.distWithHistogram(),
	}
}

// apiKey is the one key of a stage's breakdown by endpoint.
const apiKey = "api"

// addAPI records a clean request under its endpoint; a sample that names
// none (a client of its own) counts as chat, the default.
func (b *tagBreakdown) addAPI(e *event) {
	api := e.api
	if api == "" {
		api = engine.EndpointChat
	}
	if c := b.cell(apiKey, api); c != nil {
		c.add(e)
	}
}

// byAPI renders the breakdown by endpoint: nil when every request was a
// chat completion, so that the results of runs that used no other API
// read as they always did (and a merge knows what nil stands for).
func (b *tagBreakdown) byAPI() map[string]TagSummary {
	values := b.keys[apiKey]
	if _, chat := values[engine.EndpointChat]; len(values) == 0 || (len(values) == 1 && chat) {
		return nil
	}
	out := make(map[string]TagSummary, len(values))
	for api, c := range values {
		out[api] = c.summary()
	}
	return out
}
