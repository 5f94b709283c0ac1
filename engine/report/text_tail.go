package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/plan"
	"github.com/llmload/llmload/engine/textfmt"
)

// Shape of the tail histograms: a stage needs tailMinSamples latencies
// for its shape to mean anything, and gets at most tailMaxRows lines so a
// sweep of many stages stays readable.
const (
	tailMinSamples = 20
	tailMaxRows    = 10
	tailBarWidth   = 24
)

// eighths are the partial blocks that end a bar, so that a bucket of a
// few requests beside one of thousands still shows.
var eighths = [8]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// writeTail draws, per stage, TTFT and E2E side by side as log-scale
// histograms: a bimodal service (cache hits and misses, short and long
// prompts, queued and served) shows two humps that no percentile reveals.
func writeTail(b *bytes.Buffer, stages []metrics.StageSummary, labels []string) {
	var shown []int
	for i := range stages {
		if hasTail(&stages[i]) {
			shown = append(shown, i)
		}
	}
	if len(shown) == 0 {
		return
	}
	b.WriteString("\ntail: requests per latency bucket, log scale; bars scaled to each stage's largest bucket\n")
	heads := make([]string, len(shown))
	for k, i := range shown {
		heads[k] = labels[i]
	}
	head, heads := leftColumn("stage", heads)
	blankBar := strings.Repeat(" ", tailBarWidth)
	// Stages of embeddings alone have no TTFT: its columns would be empty.
	ttft := slices.ContainsFunc(shown, func(i int) bool { return stages[i].TTFT.Count > 0 })
	tw := newTable(b)
	if ttft {
		row(tw, head, "TTFT ≤", blankBar, "n", "E2E ≤", blankBar, "n")
	} else {
		row(tw, head, "E2E ≤", blankBar, "n")
	}
	for k, i := range shown {
		for j, cells := range tailRows(&stages[i]) {
			label := strings.Repeat(" ", len([]rune(head)))
			if j == 0 {
				label = heads[k]
			}
			if !ttft {
				cells = cells[3:]
			}
			row(tw, append([]string{label}, cells...)...)
		}
	}
	tw.Flush()
}

func hasTail(s *metrics.StageSummary) bool {
	return (s.TTFT.Count >= tailMinSamples && len(s.TTFT.Histogram) > 0) ||
		(s.E2E.Count >= tailMinSamples && len(s.E2E.Histogram) > 0)
}

// tailRows returns the cells right of the stage label: bucket edge, bar
// and count of TTFT, then of E2E.
func tailRows(s *metrics.StageSummary) [][]string {
	ttft, e2e := compactBuckets(s.TTFT.Histogram, tailMaxRows), compactBuckets(s.E2E.Histogram, tailMaxRows)
	var top int64
	for _, bk := range slices.Concat(ttft, e2e) {
		top = max(top, bk.Count)
	}
	rows := make([][]string, max(len(ttft), len(e2e)))
	for j := range rows {
		rows[j] = append(bucketCells(ttft, j, top), bucketCells(e2e, j, top)...)
	}
	return rows
}

func bucketCells(bs []metrics.Bucket, j int, top int64) []string {
	if j >= len(bs) {
		return []string{"", strings.Repeat(" ", tailBarWidth), ""}
	}
	return []string{plan.FormatDuration(textfmt.Duration(bs[j].LeMS)), bar(bs[j].Count, top, tailBarWidth), fmt.Sprint(bs[j].Count)}
}

// compactBuckets drops empty buckets at either end, then merges runs of
// neighbours until at most maxRows remain; a merged bucket keeps the upper
// edge of its last member.
func compactBuckets(bs []metrics.Bucket, maxRows int) []metrics.Bucket {
	first := slices.IndexFunc(bs, func(b metrics.Bucket) bool { return b.Count > 0 })
	if first < 0 || maxRows < 1 {
		return nil
	}
	last := len(bs) - 1
	for bs[last].Count == 0 {
		last--
	}
	bs = bs[first : last+1]
	k := (len(bs) + maxRows - 1) / maxRows
	out := make([]metrics.Bucket, 0, maxRows)
	for start := 0; start < len(bs); start += k {
		group := bs[start:min(start+k, len(bs))]
		m := metrics.Bucket{LeMS: group[len(group)-1].LeMS}
		for _, g := range group {
			m.Count += g.Count
		}
		out = append(out, m)
	}
	return out
}

// bar draws n against top in width cells, to an eighth of a cell, padded
// to width; any n > 0 shows at least a sliver.
func bar(n, top int64, width int) string {
	var s string
	if n > 0 && top > 0 {
		e := min(n, top) * int64(width) * 8 / top
		s = strings.Repeat("█", int(e/8)) + eighths[e%8]
		if e == 0 {
			s = eighths[1]
		}
	}
	return s + strings.Repeat(" ", width-len([]rune(s)))
}
