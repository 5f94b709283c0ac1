package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Pool is how an open-model scenario's VU pool fared (arrival-rate,
// trace and capacity-of-rates scenarios): the VUs it made and how long
// each took (the script's top level, once per VU), the arrivals that
// found every VU busy and waited for one being made, and the drops by
// reason. VUs grow from pre_allocated_vus, ahead of the busy count, up to
// max_vus; an arrival waits at most WaitBoundMS for a VU being made.
type Pool struct {
	Scenario        string  `json:"scenario"`
	PreAllocatedVUs int     `json:"pre_allocated_vus"`
	MaxVUs          int     `json:"max_vus"`
	VUs             int     `json:"vus"`   // made in all
	Grown           int     `json:"grown"` // made while the load ran
	VUInitMeanMS    float64 `json:"vu_init_mean_ms"`
	VUInitMaxMS     float64 `json:"vu_init_max_ms"`
	Waited          int64   `json:"waited"`
	WaitMaxMS       float64 `json:"wait_max_ms"`
	WaitBoundMS     float64 `json:"wait_bound_ms"`
	DroppedMaxVUs   int64   `json:"dropped_max_vus,omitempty"`
	DroppedGrowing  int64   `json:"dropped_growing,omitempty"`
	DroppedVUFailed int64   `json:"dropped_vu_failed,omitempty"`
	DroppedStopped  int64   `json:"dropped_stopped,omitempty"`
}

// AddPools records the pools and warns where arrivals were dropped while
// a pool was still growing: the script's VUs take too long to make for
// the load to find them.
func (r *Result) AddPools(pools []Pool) {
	r.Pools = pools
	for _, p := range pools {
		if p.DroppedGrowing == 0 {
			continue
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"%s: %s dropped while the pool was still growing: making a VU took up to %s ms (mean %s ms), beyond the %s ms an arrival waits; "+
				"the pool grew from %d to %d VUs — set pre_allocated_vus to about %d, or make the script's top level (run once per VU) cheaper",
			p.Scenario, count(p.DroppedGrowing, "arrival", "arrivals"), msText(p.VUInitMaxMS), msText(p.VUInitMeanMS),
			msText(p.WaitBoundMS), p.PreAllocatedVUs, p.VUs, p.VUs))
	}
}

// writePools writes a line per pool that grew, waited or dropped: how
// many VUs the load needed, what making one cost, and why arrivals were
// lost.
func writePools(b *bytes.Buffer, pools []Pool) {
	for _, p := range pools {
		drops := p.DroppedMaxVUs + p.DroppedGrowing + p.DroppedVUFailed + p.DroppedStopped
		if p.Grown == 0 && p.Waited == 0 && drops == 0 {
			continue
		}
		fmt.Fprintf(b, "VUs %s: %d pre-allocated, %d in the end of max %d (a VU took %s ms on average, %s ms at most)",
			p.Scenario, p.PreAllocatedVUs, p.VUs, p.MaxVUs, msText(p.VUInitMeanMS), msText(p.VUInitMaxMS))
		if p.Waited > 0 {
			fmt.Fprintf(b, "; %s waited for a VU being made (up to %s ms)", count(p.Waited, "arrival", "arrivals"), msText(p.WaitMaxMS))
		}
		if drops > 0 {
			var parts []string
			for _, d := range []struct {
				n    int64
				what string
			}{{p.DroppedMaxVUs, "at max_vus"}, {p.DroppedGrowing, "while growing"}, {p.DroppedVUFailed, "after a VU failed to start"},
				{p.DroppedStopped, "held at the end"}} {
				if d.n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", d.n, d.what))
				}
			}
			fmt.Fprintf(b, "; dropped %s", strings.Join(parts, ", "))
		}
		b.WriteString("\n")
	}
}

// msText is a millisecond figure to three significant digits, whole
// above 100.
func msText(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
