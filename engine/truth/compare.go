package truth

import (
	"fmt"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/sim"
)

// Quantiles are the points of a distribution the comparison reads.
var Quantiles = []float64{50, 90, 99, 99.9}

// Figures are one side's view of a distribution, in milliseconds.
type Figures struct {
	Count int64     `json:"count"`
	At    []float64 `json:"at"` // at each of Quantiles
	Max   float64   `json:"max"`
}

// Row is one metric on both sides. Resolution is the half-width of the
// client histogram's bucket at each client figure: an error within it is
// below what the result file can show.
type Row struct {
	Metric     string    `json:"metric"` // "ttft", "tpot", "e2e"
	Client     Figures   `json:"client"`
	Server     Figures   `json:"server"`
	Resolution []float64 `json:"resolution"`
}

// Error is client − server at quantile i, in milliseconds.
func (r Row) Error(i int) float64 { return r.Client.At[i] - r.Server.At[i] }

// Comparison is a result file held against a truth log.
type Comparison struct {
	Rows []Row `json:"rows"`
	// Logged counts the truth log's records; Matched those that arrived
	// after the first stage began and were streamed to their end (the
	// requests the client's distributions hold); the others are warmup,
	// preflight and rejected requests.
	Logged, Matched int
	// Tokens is the output tokens the client counted over the run, and
	// CPUPerToken its process CPU divided by them; zero without Process.
	Tokens      int64
	CPUPerToken time.Duration
	Process     *result.Process
	Notes       []string
}

// Compare holds res against recs. It fails when the result carries no
// histograms to read (a file from before they were kept) or nothing of
// the truth log matches the run.
func Compare(res *result.Result, recs []sim.TruthRecord) (*Comparison, error) {
	if len(res.Stages) == 0 {
		return nil, fmt.Errorf("the result has no stages: nothing was measured to compare")
	}
	from := res.Stages[0].Start
	for _, st := range res.Stages {
		if st.Start.Before(from) {
			from = st.Start
		}
	}
	c := &Comparison{Logged: len(recs), Process: res.Run.Process}
	var ttft, tpot, e2e []float64
	for _, r := range recs {
		if r.Arrival.Before(from) || !r.Complete || r.Status != 200 || r.TTFTMS == 0 {
			continue
		}
		c.Matched++
		ttft, e2e = append(ttft, r.TTFTMS), append(e2e, r.E2EMS)
		if r.TPOTMS > 0 {
			tpot = append(tpot, r.TPOTMS)
		}
	}
	if c.Matched == 0 {
		return nil, fmt.Errorf("none of the truth log's %d records is a streamed answer that arrived during the run (from %s): another run's log?",
			len(recs), from.Format(time.RFC3339Nano))
	}
	for _, m := range []struct {
		name   string
		server []float64
	}{{"ttft", ttft}, {"tpot", tpot}, {"e2e", e2e}} {
		row, err := compareRow(m.name, res.Stages, m.server)
		if err != nil {
			return nil, err
		}
		c.Rows = append(c.Rows, row)
	}
	for _, st := range res.Stages {
		c.Tokens += st.OutputTokens + st.TailOutputTokens
	}
	if p := c.Process; p != nil && c.Tokens > 0 {
		c.CPUPerToken = time.Duration(p.CPUS() / float64(c.Tokens) * float64(time.Second))
		if p.WithSimulator {
			c.Notes = append(c.Notes, "the simulator ran in llmload's process: its CPU is in the cost per token")
		}
	}
	if n := c.Rows[0].Client.Count; n != int64(c.Matched) {
		c.Notes = append(c.Notes, fmt.Sprintf("llmload timed %d first tokens, the server logged %d streamed answers in the run: "+
			"the percentiles are of different sets, so their difference is not only llmload's error", n, c.Matched))
	}
	return c, nil
}

// compareRow reads one metric: the client's from the stages' histograms
// merged, the server's exactly from its values, both at HDR's rank of a
// percentile.
func compareRow(name string, stages []metrics.StageSummary, server []float64) (Row, error) {
	row := Row{Metric: name, Client: Figures{At: make([]float64, len(Quantiles))}, Resolution: make([]float64, len(Quantiles))}
	var merged *hdrhistogram.PackedHistogram
	for i := range stages {
		d, _ := stages[i].Latency(name)
		if d.Count == 0 {
			continue
		}
		h, err := d.HDRHistogram()
		if err != nil {
			return row, fmt.Errorf("stage %s %s: %w", stages[i].Stage, name, err)
		}
		if h == nil {
			return row, fmt.Errorf("stage %s %s: the result keeps no histogram (written by an older llmload): run again", stages[i].Stage, name)
		}
		if merged == nil {
			merged = h
		} else {
			merged.Merge(h)
		}
		row.Client.Count += d.Count
		row.Client.Max = max(row.Client.Max, d.Max)
	}
	if merged != nil {
		for i, q := range Quantiles {
			b := metrics.HDRBucketAt(merged.ValueAtPercentile(q))
			row.Client.At[i] = float64(b.Lo+b.Hi) / 2 / metrics.HDRTicksPerMs
			row.Resolution[i] = float64(b.Hi-b.Lo+1) / 2 / metrics.HDRTicksPerMs
		}
	}
	row.Server = exact(server)
	return row, nil
}

// exact is the server's figures: the value of HDR's rank of each quantile
// among the sorted values.
func exact(v []float64) Figures {
	f := Figures{Count: int64(len(v)), At: make([]float64, len(Quantiles))}
	if len(v) == 0 {
		return f
	}
	v = slices.Clone(v)
	slices.Sort(v)
	for i, q := range Quantiles {
		f.At[i] = v[rankOf(q, len(v))-1]
	}
	f.Max = v[len(v)-1]
	return f
}

// rankOf is the 1-based rank hdrhistogram-go reads quantile q (percent)
// at among n values, round(q·n), so that both sides of a row are the same
// order statistic.
func rankOf(q float64, n int) int {
	return max(1, min(n, int(q*float64(n)/100+0.5)))
}
