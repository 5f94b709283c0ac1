package gpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmload/llmload/engine/servermetrics"
)

// fields are Query's columns that become series, in its order after the
// three that name the device; memory.total gives the free memory.
var fields = []struct {
	name string
	role servermetrics.Role
	unit string
}{
	{"utilization.gpu", servermetrics.RoleGPUUtil, servermetrics.UnitPercent},
	{"power.draw", servermetrics.RoleGPUPower, servermetrics.UnitWatts},
	{"memory.used", servermetrics.RoleGPUMemUsed, servermetrics.UnitMiB},
	{"memory.total", servermetrics.RoleGPUMemFree, servermetrics.UnitMiB},
}

// row records one device's line, "0, GPU-…, NVIDIA A100-SXM4-40GB, 87,
// 301.25, 30512, 40960"; false for a line that is not one (a warning, a
// truncated line).
func (s *Sampler) row(t float64, line string) bool {
	cols := strings.Split(line, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	if len(cols) < 3+len(fields) {
		s.notes.add(fmt.Sprintf("unreadable line from nvidia-smi: %q", firstLine(line)))
		return false
	}
	if _, err := strconv.Atoi(cols[0]); err != nil {
		s.notes.add(fmt.Sprintf("unreadable line from nvidia-smi: %q", firstLine(line)))
		return false
	}
	// The name is whatever lies between the UUID and the readings: a
	// comma in it makes more columns, never fewer.
	readings := cols[len(cols)-len(fields):]
	dev := servermetrics.GPU{Index: cols[0], UUID: cols[1], Model: strings.Join(cols[2:len(cols)-len(fields)], ", ")}
	vals := make([]float64, len(fields))
	have := make([]bool, len(fields))
	for i, f := range fields {
		vals[i], have[i] = s.value(dev, f.name, readings[i])
	}
	for i, f := range fields[:3] {
		if have[i] {
			s.point(dev, f.role, f.unit, t, vals[i])
		}
	}
	if have[2] && have[3] && vals[3] >= vals[2] {
		s.point(dev, servermetrics.RoleGPUMemFree, servermetrics.UnitMiB, t, vals[3]-vals[2])
	}
	return true
}

// value reads one field; a field the device does not report ("[N/A]",
// "[Not Supported]", anything else not a number) is noted, never zero.
func (s *Sampler) value(dev servermetrics.GPU, field, v string) (float64, bool) {
	x, err := strconv.ParseFloat(v, 64)
	if err == nil && !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 {
		return x, true
	}
	s.notes.add(fmt.Sprintf("%s %s on GPU %s", field, firstLine(v), dev.Index))
	return 0, false
}

// point appends a value to the device's series of role.
func (s *Sampler) point(dev servermetrics.GPU, role servermetrics.Role, unit string, t, v float64) {
	key := string(role) + "\x00" + dev.Key()
	i, ok := s.at[key]
	if !ok {
		i = len(s.res.Series)
		s.at[key] = i
		d := dev
		s.res.Series = append(s.res.Series, servermetrics.Series{Name: "nvidia-smi:" + string(role), Role: role, Unit: unit,
			Help: "nvidia-smi --query-gpu", GPU: &d})
	}
	ser := &s.res.Series[i]
	ser.T = append(ser.T, math.Round(t*1000)/1000)
	ser.V = append(ser.V, v)
}

// maxNotes bounds the distinct notes kept; later ones are counted
// together.
const maxNotes = 10

// notes counts messages by text, in order of first appearance.
type notes struct {
	order  []string
	counts map[string]int
	other  int
}

func (n *notes) add(msg string) {
	if n.counts == nil {
		n.counts = map[string]int{}
	}
	if _, seen := n.counts[msg]; !seen {
		if len(n.order) >= maxNotes {
			n.other++
			return
		}
		n.order = append(n.order, msg)
	}
	n.counts[msg]++
}

// lines are the notes with their counts, "power.draw [N/A] on GPU 0 (3×)".
func (n *notes) lines() []string {
	var out []string
	for _, m := range n.order {
		out = append(out, fmt.Sprintf("%s (%d×)", m, n.counts[m]))
	}
	if n.other > 0 {
		out = append(out, fmt.Sprintf("other notes (%d×)", n.other))
	}
	return out
}
