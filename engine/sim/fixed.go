package sim

import (
	"context"
	"time"
)

// fixed reports the fixed-delay mode (Config.FixedTTFT and FixedITL set).
func (c *Config) fixed() bool { return c.FixedTTFT > 0 }

// generateFixed is generate in the fixed-delay mode: no batch, no queue and
// no prefill lane, so every request, however many run at once, has its
// first token FixedTTFT after it arrived and each next one FixedITL after
// the previous, on absolute deadlines that never drift. The server's cost
// is then the only thing between these figures and a client's.
func (s *Server) generateFixed(ctx context.Context, c *completion, emit func(text string) error) error {
	var z sleeper
	defer z.stop()
	c.queued = time.Now()
	c.scheduled = c.queued // no batch slots: never queued
	first := c.arrived.Add(s.cfg.FixedTTFT)
	c.firstToken = first
	words := newWordSource(c.key, s.cfg.Seed)
	per := s.cfg.TokensPerChunk
	for i := 0; i < c.outputTokens; i += per {
		// A chunk leaves when its last token exists, as in generate.
		n := min(per, c.outputTokens-i)
		at := first.Add(time.Duration(i+n-1) * s.cfg.FixedITL)
		if err := z.until(ctx, at); err != nil {
			return err
		}
		c.lastToken = at
		text := words.next()
		for range n - 1 {
			text += words.next()
		}
		if err := c.emit(emit, text, n); err != nil {
			return err
		}
	}
	return nil
}
