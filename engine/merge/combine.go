package merge

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/metrics"
	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/run"
	"github.com/llmload/llmload/engine/servermetrics"
)

// clients gives each merged stage the worst of its segments' client
// health: one client-bound segment distorts the merged percentiles as
// surely as a client-bound single process would.
func clients(stages []metrics.StageSummary, in []Input) {
	for i := range stages {
		st := &stages[i]
		var merged *engine.ClientCheck
		for _, x := range in {
			for _, s := range x.Result.Stages {
				if s.Scenario != st.Scenario || s.Stage != st.Stage || s.Index != st.Index || s.Client == nil {
					continue
				}
				merged = worst(merged, s.Client, x.Result.Run.Segment.Label())
			}
		}
		st.Client = merged
	}
}

// worst combines two segments' health; the reasons say which segment.
func worst(a, b *engine.ClientCheck, label string) *engine.ClientCheck {
	out := &engine.ClientCheck{}
	if a != nil {
		*out = *a
		out.Reasons = slices.Clone(a.Reasons)
		out.MachineReasons = slices.Clone(a.MachineReasons)
	} else {
		out.OwnSharePercent = b.OwnSharePercent
	}
	out.CPUPercent = max(out.CPUPercent, b.CPUPercent)
	out.Cores = max(out.Cores, b.Cores)
	out.SchedLatencyP99MS = max(out.SchedLatencyP99MS, b.SchedLatencyP99MS)
	out.GCPauseP99MS = max(out.GCPauseP99MS, b.GCPauseP99MS)
	out.GCPauseTotalMS = max(out.GCPauseTotalMS, b.GCPauseTotalMS)
	out.Bound = out.Bound || b.Bound
	out.MachineMeasured = out.MachineMeasured || b.MachineMeasured
	out.MachineCores = max(out.MachineCores, b.MachineCores)
	out.MachineCPUPercent = max(out.MachineCPUPercent, b.MachineCPUPercent)
	out.StealPercent = max(out.StealPercent, b.StealPercent)
	out.RunQueue = max(out.RunQueue, b.RunQueue)
	out.OwnSharePercent = min(out.OwnSharePercent, b.OwnSharePercent)
	out.SaturatedSamples = max(out.SaturatedSamples, b.SaturatedSamples)
	out.Samples = max(out.Samples, b.Samples)
	out.MachineBusy = out.MachineBusy || b.MachineBusy
	for _, r := range b.Reasons {
		out.Reasons = append(out.Reasons, label+": "+r)
	}
	for _, r := range b.MachineReasons {
		out.MachineReasons = append(out.MachineReasons, label+": "+r)
	}
	out.Server = worstServer(out.Server, b.Server, label)
	return out
}

// worstServer combines two segments' local-server figures: each the
// highest, so that the split shown is a bound, not a sum of machines.
func worstServer(a, b *engine.ServerCPU, label string) *engine.ServerCPU {
	if b == nil {
		return a
	}
	out := &engine.ServerCPU{}
	if a != nil {
		*out = *a
		out.Reasons = slices.Clone(a.Reasons)
	}
	out.CPUPercent = max(out.CPUPercent, b.CPUPercent)
	out.MachinePercent = max(out.MachinePercent, b.MachinePercent)
	out.OwnPercent = max(out.OwnPercent, b.OwnPercent)
	out.ServerPercent = max(out.ServerPercent, b.ServerPercent)
	out.OtherPercent = max(out.OtherPercent, b.OtherPercent)
	out.Disagrees = out.Disagrees || b.Disagrees
	for _, r := range b.Reasons {
		out.Reasons = append(out.Reasons, label+": "+r)
	}
	return out
}

// serverMetrics joins the segments' scrapes of the server's metrics. Every
// segment of one run scrapes the same servers, so a series' points from
// all of them are one series sampled more often: they are put on the
// merged run's clock and in time order. Of several endpoints, the sums
// are joined so, and each endpoint with its own in every segment.
func serverMetrics(in []Input, start time.Time) *servermetrics.Result {
	var parts []serverPart
	for _, x := range in {
		if r := x.Result.ServerMetrics; r != nil {
			parts = append(parts, serverPart{r, x.Result.Run.Start.Sub(start).Seconds()})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	out := joinServer(parts)
	for _, key := range endpointKeys(parts) {
		out.Endpoints = append(out.Endpoints, *joinServer(endpointParts(parts, key)))
	}
	out.GPUs = joinExporters(parts)
	return out
}

// joinExporters joins the GPU exporters that the segments' results list
// in their GPUs by URL, in the order first seen: every segment scraped
// the same exporter, so its series join as the server's do.
func joinExporters(parts []serverPart) []servermetrics.Result {
	var urls []string
	byURL := map[string][]serverPart{}
	for _, p := range parts {
		list := p.r.GPUs
		for i := range list {
			u := list[i].URL
			if _, seen := byURL[u]; !seen {
				urls = append(urls, u)
			}
			byURL[u] = append(byURL[u], serverPart{&list[i], p.shift})
		}
	}
	var out []servermetrics.Result
	for _, u := range urls {
		out = append(out, *joinServer(byURL[u]))
	}
	return out
}

// gpuSection joins the segments' GPU sections: what each asked for, their
// nvidia-smi readings (each segment's machine's GPUs, told apart by their
// UUIDs) and their --gpu-metrics exporters, on the merged run's clock.
// The stages are left to run.AddGPU. Nil when no segment had one.
func gpuSection(in []Input, start time.Time) *result.GPU {
	var sec *result.GPU
	var smi, exporters []serverPart
	for _, x := range in {
		g := x.Result.GPU
		if g == nil {
			continue
		}
		if sec == nil {
			sec = &result.GPU{}
		}
		for _, a := range g.Asked {
			if !slices.Contains(sec.Asked, a) {
				sec.Asked = append(sec.Asked, a)
			}
		}
		shift := x.Result.Run.Start.Sub(start).Seconds()
		if g.NvidiaSMI != nil {
			smi = append(smi, serverPart{g.NvidiaSMI, shift})
		}
		exporters = append(exporters, serverPart{&servermetrics.Result{GPUs: g.Exporters}, shift})
	}
	if sec == nil {
		return nil
	}
	if len(smi) > 0 {
		sec.NvidiaSMI = joinServer(smi)
	}
	sec.Exporters = joinExporters(exporters)
	return sec
}

// serverPart is one segment's server metrics, with the shift of its
// series' times onto the merged run's clock.
type serverPart struct {
	r     *servermetrics.Result
	shift float64
}

// endpointKey tells endpoints apart across segments.
type endpointKey struct{ target, url string }

// endpointKeys are the segments' endpoints, in the order first seen.
func endpointKeys(parts []serverPart) []endpointKey {
	var keys []endpointKey
	for _, p := range parts {
		for _, e := range p.r.Endpoints {
			if k := (endpointKey{e.Target, e.URL}); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// endpointParts are the segments' results of one endpoint.
func endpointParts(parts []serverPart, key endpointKey) []serverPart {
	var out []serverPart
	for _, p := range parts {
		for i := range p.r.Endpoints {
			if e := &p.r.Endpoints[i]; e.Target == key.target && e.URL == key.url {
				out = append(out, serverPart{e, p.shift})
			}
		}
	}
	return out
}

// joinServer joins one endpoint's results (or several endpoints' sums)
// from the segments, without their Endpoints.
func joinServer(parts []serverPart) *servermetrics.Result {
	first := parts[0].r
	out := &servermetrics.Result{URL: first.URL, Target: first.Target, Discovered: first.Discovered,
		EveryS: first.EveryS, Server: first.Server, Examples: first.Examples, Note: first.Note}
	// A series is its name and, for GPU telemetry, its device.
	type seriesKey struct{ name, device string }
	index := map[seriesKey]int{}
	for _, p := range parts {
		r := p.r
		out.Server = cmp.Or(out.Server, r.Server)
		out.Families, out.Known = max(out.Families, r.Families), max(out.Known, r.Known)
		out.Scrapes += r.Scrapes
		out.Failures += r.Failures
		for _, e := range r.Errors {
			if !slices.Contains(out.Errors, e) && len(out.Errors) < servermetrics.MaxErrors {
				out.Errors = append(out.Errors, e)
			}
		}
		for _, s := range r.Series {
			key := seriesKey{name: s.Name}
			if s.GPU != nil {
				key.device = s.GPU.Key()
			}
			i, ok := index[key]
			if !ok {
				i = len(out.Series)
				index[key] = i
				out.Series = append(out.Series, servermetrics.Series{Name: s.Name, Role: s.Role, Help: s.Help, Unit: s.Unit, GPU: s.GPU})
			}
			dst := &out.Series[i]
			for k := range min(len(s.T), len(s.V)) {
				dst.T = append(dst.T, s.T[k]+p.shift)
				dst.V = append(dst.V, s.V[k])
			}
		}
	}
	for i := range out.Series {
		sortPoints(&out.Series[i])
	}
	return out
}

// sortPoints orders a series' points by time, stably.
func sortPoints(s *servermetrics.Series) {
	idx := make([]int, len(s.T))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.T[idx[a]] < s.T[idx[b]] })
	t, v := make([]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		t[k], v[k] = s.T[i], s.V[i]
	}
	s.T, s.V = t, v
}

// segmentWarnings say where the segments did not run as one: they started
// apart, one started late against the barrier, or one did not complete.
func segmentWarnings(in []Input) []string {
	var out []string
	var first, last *Input
	for i := range in {
		x := &in[i]
		seg := x.Result.Run.Segment
		if w := run.LateStart(seg); w != "" {
			out = append(out, w)
		}
		if seg.ActualStart.IsZero() {
			continue
		}
		if first == nil || seg.ActualStart.Before(first.Result.Run.Segment.ActualStart) {
			first = x
		}
		if last == nil || seg.ActualStart.After(last.Result.Run.Segment.ActualStart) {
			last = x
		}
	}
	if first != nil {
		a, b := first.Result.Run.Segment, last.Result.Run.Segment
		if spread := b.ActualStart.Sub(a.ActualStart); spread > run.SegmentSkew {
			out = append(out, fmt.Sprintf("segments started %v apart (%s at %s, %s at %s): each stage's load was whole for %v less than planned; start them with one --start-at and keep the machines' clocks in sync (NTP, chrony)",
				spread.Round(time.Millisecond), a.Label(), clock(a.ActualStart), b.Label(), clock(b.ActualStart), spread.Round(time.Millisecond)))
		}
	}
	for _, x := range in {
		r := x.Result.Run
		if !r.Complete {
			why := r.Aborted
			if why == "" {
				why = "interrupted"
			}
			out = append(out, fmt.Sprintf("%s (%s) did not complete (%s): the merged figures include only what it sent", r.Segment.Label(), x.Path, why))
		}
	}
	return out
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000 UTC") }
