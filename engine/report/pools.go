package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine/result"
	"github.com/llmload/llmload/engine/textfmt"
)

// writePools writes a line per pool that grew, waited or dropped: how
// many VUs the load needed, what making one cost, and why arrivals were
// lost.
func writePools(b *bytes.Buffer, pools []result.Pool) {
	for _, p := range pools {
		drops := p.DroppedMaxVUs + p.DroppedGrowing + p.DroppedVUFailed + p.DroppedStopped + p.DroppedParent
		if p.Grown == 0 && p.Waited == 0 && drops == 0 {
			continue
		}
		fmt.Fprintf(b, "VUs %s: %d pre-allocated, %d in the end of max %d (a VU took %s ms on average, %s ms at most)",
			p.Scenario, p.PreAllocatedVUs, p.VUs, p.MaxVUs, textfmt.MS(p.VUInitMeanMS), textfmt.MS(p.VUInitMaxMS))
		if p.Waited > 0 {
			fmt.Fprintf(b, "; %s waited for a VU being made (up to %s ms)", textfmt.Count(p.Waited, "arrival", "arrivals"), textfmt.MS(p.WaitMaxMS))
		}
		if drops > 0 {
			var parts []string
			for _, d := range []struct {
				n    int64
				what string
			}{{p.DroppedMaxVUs, "at max_vus"}, {p.DroppedGrowing, "while growing"}, {p.DroppedVUFailed, "after a VU failed to start"},
				{p.DroppedStopped, "held at the end"}, {p.DroppedParent, "after their parent was dropped"}} {
				if d.n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", d.n, d.what))
				}
			}
			fmt.Fprintf(b, "; dropped %s", strings.Join(parts, ", "))
		}
		b.WriteString("\n")
	}
}
