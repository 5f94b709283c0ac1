package sim

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
)

// DefaultSpecAccept is the chance that a draft token is accepted when
// Config.SpecTokens is set and Config.SpecAccept is not.
const DefaultSpecAccept = 0.7

// MaxSpecTokens bounds Config.SpecTokens, and so the position series of
// vllm:spec_decode_num_accepted_tokens_per_pos.
const MaxSpecTokens = 32

// specSalt keeps the drafts' random stream apart from the output length's.
const specSalt = 0x5bec_dec0_de5b_ec00

// specDecode counts speculative decoding as vLLM's SpecDecodingStats does
// (vllm/v1/spec_decode/metrics.py at commit 016a8587): one draft of K
// tokens per decode step of a request, the accepted ones, and for each
// position how often it was accepted. Safe for concurrent use.
type specDecode struct {
	k int
	p float64

	drafts, draftTokens, accepted atomic.Int64
	perPos                        []atomic.Int64 // accepted at position 0..k-1
}

// newSpecDecode is nil when cfg has no speculative decoding.
func newSpecDecode(cfg *Config) *specDecode {
	if cfg.SpecTokens <= 0 {
		return nil
	}
	return &specDecode{k: cfg.SpecTokens, p: cfg.SpecAccept, perPos: make([]atomic.Int64, cfg.SpecTokens)}
}

// drafter is one request's drafts, seeded by its content key so the same
// request is accepted alike in every run. Not safe for concurrent use; a
// nil drafter never drafts.
type drafter struct {
	sd  *specDecode
	rng *rand.Rand
}

func (sd *specDecode) drafter(key uint64, seed int64) *drafter {
	if sd == nil {
		return nil
	}
	return &drafter{sd: sd, rng: rand.New(rand.NewPCG(key^specSalt, uint64(seed)))}
}

// step verifies one draft of K tokens: each is accepted with probability
// P, in order, until the first rejected. It counts the draft and returns
// the tokens accepted. The draft is K tokens even near the end of an
// answer, as vLLM's drafter does not know where it ends; the caller sends
// only what fits.
func (d *drafter) step() int {
	if d == nil {
		return 0
	}
	sd := d.sd
	a := 0
	for a < sd.k && d.rng.Float64() < sd.p {
		a++
	}
	sd.drafts.Add(1)
	sd.draftTokens.Add(int64(sd.k))
	sd.accepted.Add(int64(a))
	for i := range a {
		sd.perPos[i].Add(1)
	}
	return a
}

// SpecStats are the speculative-decoding counters /metrics serves.
type SpecStats struct {
	Drafts         int64   // drafts verified: one a decode step
	DraftTokens    int64   // tokens drafted: SpecTokens a draft
	Accepted       int64   // of those, accepted
	AcceptedPerPos []int64 // accepted at each draft position, 0 first
}

// stats snapshots the counters; zero without speculative decoding.
func (sd *specDecode) stats() SpecStats {
	if sd == nil {
		return SpecStats{}
	}
	st := SpecStats{Drafts: sd.drafts.Load(), DraftTokens: sd.draftTokens.Load(), Accepted: sd.accepted.Load()}
	for i := range sd.perPos {
		st.AcceptedPerPos = append(st.AcceptedPerPos, sd.perPos[i].Load())
	}
	return st
}

// write serves the counters under vLLM's names: prometheus_client adds
// _total to a Counter named vllm:spec_decode_num_drafts, and the
// per-position one has a position label, "0" first.
func (sd *specDecode) write(p promWriter) {
	if sd == nil {
		return
	}
	st := sd.stats()
	p.scalar("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", float64(st.Drafts))
	p.scalar("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", float64(st.DraftTokens))
	p.scalar("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", float64(st.Accepted))
	const name = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
	p.header(name, "counter", "Accepted tokens per draft position.")
	for i, v := range st.AcceptedPerPos {
		p.w.WriteString(name + "{" + p.labels + `,position="` + strconv.Itoa(i) + `"} ` + formatFloat(float64(v)) + "\n")
	}
}
