package metrics

import (
	"math"
	"testing"
	"time"

	"github.com/llmload/llmload/engine"
)

// TestChunks counts the tokens per chunk of the streamed requests the
// server counted, and no other: 2, 3 and 2.6 tokens per chunk.
func TestChunks(t *testing.T) {
	c := NewCollector()
	for _, tc := range []struct {
		tokens, events int
		source         string
	}{
		{200, 100, engine.TokensFromUsage},
		{300, 100, engine.TokensFromUsage},
		{130, 50, engine.TokensFromUsage},
		{100, 100, engine.TokensFromEvents},  // the client's own count: one per event
		{100, 0, engine.TokensFromUsage},     // not streamed
		{80, 40, engine.TokensFromTokenizer}, // text, not the server's steps
	} {
		s := okSample("c1", 0, time.Second)
		s.OutputTokens, s.TextEvents, s.TokensSource = tc.tokens, tc.events, tc.source
		c.Sample(s)
	}
	bad := failSample("c1", 0, "conn_reset")
	bad.OutputTokens, bad.TextEvents, bad.TokensSource = 50, 5, engine.TokensFromUsage
	c.Sample(bad)
	st := findStage(t, c.Close(), "c1")
	ch := st.Chunks
	if ch == nil {
		t.Fatal("no chunks")
	}
	if ch.Requests != 3 || math.Abs(ch.Mean-(2+3+2.6)/3) > 1e-9 {
		t.Errorf("requests %d mean %v", ch.Requests, ch.Mean)
	}
	if math.Abs(ch.P50-2.6) > 0.01 || math.Abs(ch.P99-3) > 0.01 {
		t.Errorf("p50 %v p99 %v, want 2.6 and 3", ch.P50, ch.P99)
	}
}

// TestChunksAbsent leaves the figure out of a stage with no request the
// server counted.
func TestChunksAbsent(t *testing.T) {
	c := NewCollector()
	s := okSample("c1", 0, time.Second)
	s.OutputTokens, s.TextEvents, s.TokensSource = 10, 10, engine.TokensFromEvents
	c.Sample(s)
	if st := findStage(t, c.Close(), "c1"); st.Chunks != nil {
		t.Errorf("chunks %+v", st.Chunks)
	}
}

// BenchmarkChunksAdd is the cost a streamed request adds to its stage.
func BenchmarkChunksAdd(b *testing.B) {
	var c chunkDist
	e := &event{source: engine.TokensFromUsage, outTok: 260, textEvents: 100}
	b.ReportAllocs()
	for b.Loop() {
		c.add(e)
	}
}
