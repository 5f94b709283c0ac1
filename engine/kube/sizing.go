package kube

import (
	"encoding/binary"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/llmload/llmload/engine/plan"
)

// Load is one segment's share of a plan: what sizing and time budgets
// need to know of it.
type Load struct {
	// VUs is the most VUs one segment may hold at once: segment 0's
	// share (it gets any remainder), summed over scenarios as if they
	// all overlapped.
	VUs int
	// Rate is the highest arrival rate one segment starts, iterations a
	// second, summed over the open-model scenarios.
	Rate float64
	// Stages counts the plan's stages: each is a row of histograms in
	// every result file.
	Stages int
	// Length runs from the end of VU start-up to the end of the last
	// scenario: warmup, stages and graceful stops, as bounds.
	Length time.Duration
}

// LoadOf is one of n segments' share of p.
func LoadOf(p plan.Plan, n int) Load {
	seg := plan.Segment{Index: 0, Count: n}
	var l Load
	var end time.Duration
	for _, sc := range p.Scenarios {
		l.VUs += seg.Share(sc.MaxVUs())
		l.Stages += len(sc.Stages)
		end = max(end, sc.StartTime+sc.Duration()+sc.GracefulStop)
		if plan.OpenModel(sc.Executor) {
			peak := sc.StartRate
			for _, st := range sc.Stages {
				peak = max(peak, st.Rate)
			}
			l.Rate += sc.RatePerSecond(peak) / float64(max(n, 1))
		}
	}
	l.Length = p.Warmup.Duration + end
	return l
}

// The sizing of a segment pod. Measured on llmload itself (docs/measurement.md, "How
// fast is llmload itself?"): peak RSS 38 MB at 64 streams, 169 MB at
// 1,024 and 1.1 GB at 10,000 VUs, so about 110 KB a streaming VU over a
// base; a streamed token costs 12–22 µs of CPU and an iteration of the
// open model about 180 µs. A VU streaming some 50 tokens a second costs
// about a millicore.
const (
	BaseMemory    = 64 << 20  // runtime, collector, self-check, client pools
	MemoryPerVU   = 160 << 10 // a VU's Lua state, stream buffers and in-flight request, with headroom
	BaseMilliCPU  = 250       // the collector, the self-check and the garbage collector
	MilliCPUPerVU = 1         // a VU streaming about 50 tokens a second
	// MilliCPUPerRate is a millicore per 5 iterations a second (180 µs each).
	MilliCPUPerRate = 0.2
)

// SegmentMemory is a segment pod's memory request: BaseMemory +
// MemoryPerVU × VUs + what its data pools hold (loaded once per process,
// about their decompressed size), rounded up to a MiB.
func SegmentMemory(l Load, data []File) int64 {
	b := int64(BaseMemory) + int64(MemoryPerVU)*int64(l.VUs)
	for _, f := range data {
		b += decompressedSize(f.Data)
	}
	return roundUp(b, 1<<20)
}

// SegmentMilliCPU is a segment pod's CPU request in millicores:
// BaseMilliCPU + MilliCPUPerVU × VUs + MilliCPUPerRate × Rate, rounded up
// to 10.
func SegmentMilliCPU(l Load) int64 {
	m := float64(BaseMilliCPU) + float64(MilliCPUPerVU*l.VUs) + MilliCPUPerRate*l.Rate
	return roundUp(int64(m+0.999), 10)
}

// segmentResources applies the overrides to the computed sizing. The
// memory limit is twice the request: llmload bounds itself at half its
// container's limit (run's default --max-memory), so it stops and writes
// its result before the kernel would kill it and lose it. There is no CPU
// limit unless asked for: CFS throttling stalls the whole process for the
// rest of a 100 ms period, a stall that lands in the TTFT and ITL it
// measures.
func segmentResources(s Spec) (corev1.ResourceRequirements, error) {
	r := s.Resources
	if r.CPU.IsZero() {
		r.CPU = *resource.NewMilliQuantity(SegmentMilliCPU(s.Load), resource.DecimalSI)
	}
	if r.Memory.IsZero() {
		r.Memory = *resource.NewQuantity(SegmentMemory(s.Load, s.Data), resource.BinarySI)
	}
	if r.MemoryLimit.IsZero() {
		r.MemoryLimit = *resource.NewQuantity(2*r.Memory.Value(), resource.BinarySI)
	}
	if r.MemoryLimit.Cmp(r.Memory) < 0 {
		return corev1.ResourceRequirements{}, &FieldError{"memory-limit", fmt.Errorf("%s is below the memory request %s", &r.MemoryLimit, &r.Memory)}
	}
	if !r.CPULimit.IsZero() && r.CPULimit.Cmp(r.CPU) < 0 {
		return corev1.ResourceRequirements{}, &FieldError{"cpu-limit", fmt.Errorf("%s is below the CPU request %s", &r.CPULimit, &r.CPU)}
	}
	out := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: r.CPU, corev1.ResourceMemory: r.Memory},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: r.MemoryLimit},
	}
	if !r.CPULimit.IsZero() {
		out.Limits[corev1.ResourceCPU] = r.CPULimit
	}
	return out, nil
}

// mergeResources sizes the merge pod: it waits, then holds every
// segment's histograms at once, a few MiB each.
func mergeResources(segments int) corev1.ResourceRequirements {
	mem := int64(128<<20) + int64(segments)*(16<<20)
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"),
			corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI)},
		Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(2*mem, resource.BinarySI)},
	}
}

// ResultsSize is the claim's size: a segment's result file holds a few
// MiB of histograms plus about a MiB a stage (4 MiB + 1 MiB × stages),
// twice over for the merged file, rounded up to a GiB, never below 1 GiB
// (many storage classes' smallest volume).
func ResultsSize(l Load, segments int) resource.Quantity {
	per := int64(4<<20) + int64(l.Stages)*(1<<20)
	b := roundUp(2*int64(segments)*per, 1<<30)
	return *resource.NewQuantity(max(b, 1<<30), resource.BinarySI)
}

// decompressedSize is a file's size once loaded: a gzip member's trailer
// holds its uncompressed size modulo 2^32 (RFC 1952, ISIZE), which a pool
// under 4 GiB gives exactly.
func decompressedSize(b []byte) int64 {
	if len(b) >= 18 && b[0] == 0x1f && b[1] == 0x8b {
		return int64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	}
	return int64(len(b))
}

func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }
