package metrics

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmload/llmload/engine"
)

// chunkScale keeps three decimals of a tokens-per-chunk ratio in the
// histogram's integers.
const chunkScale = 1000

// Chunks is the client's evidence of speculative decoding over a stage:
// how many tokens each streamed chunk carried, per request — its output
// tokens as the server counted them (usage) over its text events. A
// server that streams one step per chunk sends k tokens in a chunk when it
// accepted k−1 drafted ones, so a mean well above 1 is speculation (or a
// server batching its stream) seen from the client.
type Chunks struct {
	// Requests are the successful streamed requests counted: those with
	// the server's token count and at least one text event.
	Requests int64 `json:"requests"`
	// Mean, P50 and P99 are over those requests' tokens per chunk.
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
}

// chunkDist accumulates a stage's Chunks. Owned by the aggregator.
type chunkDist struct {
	h   *hdrhistogram.Histogram
	sum float64
}

// add counts one successful request: only a streamed one whose output
// tokens came from the server's usage, since the client's own counts are
// of text and would measure nothing of the server's steps.
func (c *chunkDist) add(e *event) {
	if e.source != engine.TokensFromUsage || e.textEvents <= 0 || e.outTok <= 0 {
		return
	}
	if c.h == nil {
		// 0.001 to 100,000 tokens per chunk, three significant figures.
		c.h = hdrhistogram.New(1, 100_000*chunkScale, 3)
	}
	r := float64(e.outTok) / float64(e.textEvents)
	if c.h.RecordValue(int64(r*chunkScale+0.5)) == nil {
		c.sum += r
	}
}

// summary is the stage's Chunks; nil without a request counted.
func (c *chunkDist) summary() *Chunks {
	if c.h == nil || c.h.TotalCount() == 0 {
		return nil
	}
	n := c.h.TotalCount()
	return &Chunks{Requests: n, Mean: c.sum / float64(n),
		P50: float64(c.h.ValueAtQuantile(50)) / chunkScale, P99: float64(c.h.ValueAtQuantile(99)) / chunkScale}
}
