package servermetrics

// Energy sources of a stage's GPU energy.
const (
	// EnergyCounter is the increase of the device's energy counter
	// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) over the stage's scrapes.
	EnergyCounter = "energy counter"
	// EnergyPowerIntegral is the stage's mean power times its length,
	// where no energy counter was read (nvidia-smi).
	EnergyPowerIntegral = "power integral"
)

// GPUDevice is one GPU over a window. A figure no scrape in the window
// gave is nil, never zero.
type GPUDevice struct {
	GPU
	// Source is where its figures came from: the exporter's URL, or
	// "nvidia-smi".
	Source        string   `json:"source"`
	UtilMeanPct   *float64 `json:"util_mean_pct,omitempty"`
	PowerMeanW    *float64 `json:"power_mean_w,omitempty"`
	MemUsedMaxMiB *float64 `json:"mem_used_max_mib,omitempty"`
	// MemTotalMiB is its framebuffer: the most used plus the least free,
	// which are of one scrape as the two always add up to the whole.
	MemTotalMiB  *float64 `json:"mem_total_mib,omitempty"`
	EnergyJ      *float64 `json:"energy_j,omitempty"`
	EnergySource string   `json:"energy_source,omitempty"` // EnergyCounter or EnergyPowerIntegral
}

// GPUStage is every GPU seen over a window, and their totals: the mean
// utilisation over the GPUs, and the sums of their mean power, their
// highest memory use and their energy. A total is nil unless every GPU
// has its figure, so that a part never passes for the whole.
type GPUStage struct {
	Devices       []GPUDevice `json:"devices"`
	UtilMeanPct   *float64    `json:"util_mean_pct,omitempty"`
	PowerW        *float64    `json:"power_w,omitempty"`
	MemUsedMaxMiB *float64    `json:"mem_used_max_mib,omitempty"`
	EnergyJ       *float64    `json:"energy_j,omitempty"`
	// EnergySource is the devices' common one, or both joined by " and ".
	EnergySource string `json:"energy_source,omitempty"`
}

// GPUSources are the Results of r that hold GPU series themselves: r, its
// endpoints and its GPU exporters, in that order.
func GPUSources(r *Result) []*Result {
	if r == nil {
		return nil
	}
	var out []*Result
	for _, s := range r.Series {
		if s.GPU != nil {
			out = append(out, r)
			break
		}
	}
	for i := range r.Endpoints {
		out = append(out, GPUSources(&r.Endpoints[i])...)
	}
	for i := range r.GPUs {
		out = append(out, GPUSources(&r.GPUs[i])...)
	}
	return out
}

// StageGPU reads every GPU of the sources over the window (from, to],
// in seconds since the run start; a device two sources describe (the DCGM
// exporter and nvidia-smi) is read from the first. ok is false when no
// device has a figure in the window.
func StageGPU(sources []*Result, from, to float64) (g GPUStage, ok bool) {
	seen := map[string]bool{}
	for _, src := range sources {
		for _, key := range deviceKeys(src) {
			if seen[key] {
				continue
			}
			seen[key] = true
			if d, has := device(src, key, from, to); has {
				g.Devices = append(g.Devices, d)
			}
		}
	}
	if len(g.Devices) == 0 {
		return GPUStage{}, false
	}
	g.totals()
	return g, true
}

// deviceKeys are the devices of a source's own series, in order.
func deviceKeys(r *Result) []string {
	var keys []string
	seen := map[string]bool{}
	for _, s := range r.Series {
		if s.GPU != nil && !seen[s.GPU.Key()] {
			seen[s.GPU.Key()] = true
			keys = append(keys, s.GPU.Key())
		}
	}
	return keys
}

// device reads one device's series over the window.
func device(r *Result, key string, from, to float64) (d GPUDevice, ok bool) {
	d.Source = r.URL
	var energy, free *float64
	for i := range r.Series {
		s := &r.Series[i]
		if s.GPU == nil || s.GPU.Key() != key {
			continue
		}
		d.GPU = *s.GPU
		switch s.Role {
		case RoleGPUUtil:
			d.UtilMeanPct = within(s.Mean(from, to))
		case RoleGPUPower:
			d.PowerMeanW = within(s.Mean(from, to))
		case RoleGPUMemUsed:
			d.MemUsedMaxMiB = within(s.Max(from, to))
		case RoleGPUMemFree:
			free = within(s.Min(from, to))
		case RoleGPUEnergy:
			energy = sumWithin(s, from, to)
		}
	}
	if d.MemUsedMaxMiB != nil && free != nil {
		total := *d.MemUsedMaxMiB + *free
		d.MemTotalMiB = &total
	}
	switch {
	case energy != nil:
		d.EnergyJ, d.EnergySource = energy, EnergyCounter
	case d.PowerMeanW != nil && to > from:
		j := *d.PowerMeanW * (to - from)
		d.EnergyJ, d.EnergySource = &j, EnergyPowerIntegral
	}
	ok = d.UtilMeanPct != nil || d.PowerMeanW != nil || d.MemUsedMaxMiB != nil || d.EnergyJ != nil
	return d, ok
}

// totals sums the devices' figures where every device has them.
func (g *GPUStage) totals() {
	var util, power, mem, energy []float64
	sources := map[string]bool{}
	for _, d := range g.Devices {
		util, power = appendSet(util, d.UtilMeanPct), appendSet(power, d.PowerMeanW)
		mem, energy = appendSet(mem, d.MemUsedMaxMiB), appendSet(energy, d.EnergyJ)
		if d.EnergySource != "" {
			sources[d.EnergySource] = true
		}
	}
	n := len(g.Devices)
	if len(util) == n {
		v := average(util)
		g.UtilMeanPct = &v
	}
	g.PowerW, g.MemUsedMaxMiB, g.EnergyJ = total(power, n), total(mem, n), total(energy, n)
	switch {
	case g.EnergyJ == nil:
	case len(sources) == 2:
		g.EnergySource = EnergyCounter + " and " + EnergyPowerIntegral
	case sources[EnergyCounter]:
		g.EnergySource = EnergyCounter
	default:
		g.EnergySource = EnergyPowerIntegral
	}
}

func appendSet(vs []float64, v *float64) []float64 {
	if v == nil {
		return vs
	}
	return append(vs, *v)
}

// total is the sum of vs when there is one value per device; else nil.
func total(vs []float64, n int) *float64 {
	if len(vs) != n {
		return nil
	}
	t := 0.0
	for _, v := range vs {
		t += v
	}
	return &t
}

func within(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// sumWithin adds the series' values in the window; nil for none.
func sumWithin(s *Series, from, to float64) *float64 {
	t, n := 0.0, 0
	s.each(from, to, func(v float64) { t += v; n++ })
	if n == 0 {
		return nil
	}
	return &t
}
