package servermetrics

import (
	"testing"
)

// TestStageGPU reads a DCGM exporter's device and an nvidia-smi one over
// a window: the first's energy from its counter, the second's from its
// power (100 W for 10 s), the totals over both, and a device both sources
// describe counted once.
func TestStageGPU(t *testing.T) {
	b := newBuilder()
	for i, f := range []string{"testdata/dcgm_2.0.13_1.txt", "testdata/dcgm_2.0.13_2.txt"} {
		b.add(float64(10*i), i, parse(t, f))
	}
	dcgm := &Result{URL: "http://gpu:9400/metrics", Series: b.series()}
	smi := &Result{URL: "nvidia-smi", Series: []Series{
		{Role: RoleGPUPower, Unit: UnitWatts, T: []float64{5, 10}, V: []float64{90, 110}, GPU: &GPU{Index: "1", UUID: "GPU-b"}},
		{Role: RoleGPUPower, Unit: UnitWatts, T: []float64{5, 10}, V: []float64{1, 1}, GPU: &GPU{Index: "0", UUID: "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba"}},
	}}
	g, ok := StageGPU([]*Result{dcgm, smi}, 0, 10)
	if !ok || len(g.Devices) != 2 {
		t.Fatalf("stage %+v ok %v", g, ok)
	}
	d := g.Devices[0]
	if !near(d.UtilMeanPct, 87) || !near(d.PowerMeanW, 151.204) || !near(d.MemUsedMaxMiB, 6945) ||
		!near(d.MemTotalMiB, 8121) || !near(d.EnergyJ, 756.02) || d.EnergySource != EnergyCounter || d.Source != dcgm.URL {
		t.Errorf("DCGM device %+v", d)
	}
	s := g.Devices[1]
	if s.UtilMeanPct != nil || !near(s.EnergyJ, 1000) || s.EnergySource != EnergyPowerIntegral || s.Source != "nvidia-smi" {
		t.Errorf("nvidia-smi device %+v", s)
	}
	if g.UtilMeanPct != nil || g.MemUsedMaxMiB != nil || !near(g.PowerW, 251.204) || !near(g.EnergyJ, 1756.02) ||
		g.EnergySource != EnergyCounter+" and "+EnergyPowerIntegral {
		t.Errorf("totals %+v", g)
	}
	if _, ok := StageGPU([]*Result{dcgm}, 20, 30); ok {
		t.Error("a window without scrapes has GPU figures")
	}
	if got := GPUSources(&Result{Series: []Series{}, GPUs: []Result{*dcgm}}); len(got) != 1 || got[0].URL != dcgm.URL {
		t.Errorf("sources %v", got)
	}
}
