package servermetrics

import (
	"cmp"
	"math"

	dto "github.com/prometheus/client_model/go"
)

// GPU names the device a GPU series describes, from the DCGM exporter's
// labels (gpu, UUID, modelName, Hostname, and in Kubernetes the pod,
// namespace and container using it) or nvidia-smi's fields.
type GPU struct {
	Index     string `json:"index"` // DCGM's gpu label, nvidia-smi's index
	UUID      string `json:"uuid,omitempty"`
	Model     string `json:"model,omitempty"`
	Host      string `json:"host,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Container string `json:"container,omitempty"`
}

// Key identifies the device across scrapes and sources: its UUID, else
// its host and index.
func (g *GPU) Key() string {
	if g.UUID != "" {
		return g.UUID
	}
	return g.Host + "/" + g.Index
}

// gpuMetric is one DCGM field llmload keeps, per device.
type gpuMetric struct {
	name    string
	role    Role
	unit    string
	counter bool    // a counter: its increase per interval is kept
	scale   float64 // to the series' unit
}

// gpuMetrics are the DCGM exporter's fields kept, with the types and units
// of its etc/default-counters.csv: utilisation and power are gauges, the
// framebuffer in MiB, and the energy a counter of mJ since boot, kept as J
// used per scrape interval.
var gpuMetrics = []gpuMetric{
	{"DCGM_FI_DEV_GPU_UTIL", RoleGPUUtil, UnitPercent, false, 1},
	{"DCGM_FI_DEV_POWER_USAGE", RoleGPUPower, UnitWatts, false, 1},
	{"DCGM_FI_DEV_FB_USED", RoleGPUMemUsed, UnitMiB, false, 1},
	{"DCGM_FI_DEV_FB_FREE", RoleGPUMemFree, UnitMiB, false, 1},
	{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", RoleGPUEnergy, UnitJoules, true, 1e-3},
}

// dcgmBlank is where DCGM's "blank" values begin: a field the device does
// not support is exported as a huge sentinel (DCGM_FP64_BLANK is 2^47,
// the int64 blanks sit near 2^63, as the README's MEMORY_TEMP of
// 9223372036854775794 shows), never as a reading.
const dcgmBlank = 140737488355328.0

// gpuTracks follow the DCGM fields of every device an endpoint exposes.
// Not safe for concurrent use: the builder's owner owns it.
type gpuTracks struct {
	series []Series
	at     map[string]int     // field and device → index in series
	prev   map[string]float64 // a counter's previous value, by the same key
}

// add records one scrape's DCGM fields; known collects the fields seen.
func (g *gpuTracks) add(t float64, round int, fams families, known map[string]bool) {
	for _, m := range gpuMetrics {
		mf := lookup(fams, m.name)
		if mf == nil {
			continue
		}
		known[m.name] = true
		seen := map[string]bool{}
		for _, sample := range mf.GetMetric() {
			dev := gpuOf(sample)
			key := m.name + "\x00" + dev.Key()
			v, ok := scalar(sample)
			// A MIG GPU is exported once per instance with the whole
			// device's power and energy: its first row stands for it.
			if !ok || seen[key] || math.IsNaN(v) || math.IsInf(v, 0) || v >= dcgmBlank || v < 0 {
				continue
			}
			seen[key] = true
			g.record(m, key, dev, t, round, v, mf.GetHelp())
		}
	}
}

// record adds one device's value of one field.
func (g *gpuTracks) record(m gpuMetric, key string, dev GPU, t float64, round int, v float64, help string) {
	if m.counter {
		prev, had := g.prev[key]
		g.prev[key] = v
		if !had {
			return
		}
		if v -= prev; v < 0 { // reset (a driver reload): unknown increase
			return
		}
	}
	i, ok := g.at[key]
	if !ok {
		i = len(g.series)
		g.at[key] = i
		d := dev
		g.series = append(g.series, Series{Name: m.name, Role: m.role, Unit: m.unit, Help: help, GPU: &d})
	}
	s := &g.series[i]
	s.T = append(s.T, math.Round(t*1000)/1000)
	s.V = append(s.V, v*m.scale)
	s.rounds = append(s.rounds, round)
}

func newGPUTracks() *gpuTracks {
	return &gpuTracks{at: map[string]int{}, prev: map[string]float64{}}
}

// gpuOf reads a DCGM sample's device labels. Newer exporters spell the
// host label "hostname".
func gpuOf(m *dto.Metric) GPU {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return GPU{Index: l["gpu"], UUID: l["UUID"], Model: l["modelName"], Host: cmp.Or(l["Hostname"], l["hostname"]),
		Pod: l["pod"], Namespace: l["namespace"], Container: l["container"]}
}

// GPUSeries are every GPU series of the result, its endpoints' and its
// GPU exporters' included, in order.
func (r *Result) GPUSeries() []*Series {
	if r == nil {
		return nil
	}
	var out []*Series
	for i := range r.Series {
		if r.Series[i].GPU != nil {
			out = append(out, &r.Series[i])
		}
	}
	for i := range r.Endpoints {
		out = append(out, r.Endpoints[i].GPUSeries()...)
	}
	for i := range r.GPUs {
		out = append(out, r.GPUs[i].GPUSeries()...)
	}
	return out
}
