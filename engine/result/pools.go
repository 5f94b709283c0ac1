package result

import (
	"fmt"

	"github.com/llmload/llmload/engine/textfmt"
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
	// DroppedParent counts trace records never sent because their parent
	// was never answered (dropped, or canceled by the graceful stop).
	DroppedParent int64 `json:"dropped_parent,omitempty"`
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
			p.Scenario, textfmt.Count(p.DroppedGrowing, "arrival", "arrivals"), textfmt.MS(p.VUInitMaxMS), textfmt.MS(p.VUInitMeanMS),
			textfmt.MS(p.WaitBoundMS), p.PreAllocatedVUs, p.VUs, p.VUs))
	}
}
