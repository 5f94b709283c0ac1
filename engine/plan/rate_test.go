package plan

import (
	"math"
	"testing"
	"time"
)

const sec = time.Second

func TestLoadOf(t *testing.T) {
	tests := map[string]struct {
		from, target float64
		st           Stage
		want         StageLoad
		integral     float64
		mean         float64
	}{
		"step and hold": {from: 2, target: 4, st: Stage{Duration: 10 * sec},
			want: StageLoad{From: 4, To: 4, Hold: 10 * sec}, integral: 40, mean: 4},
		"ramp the whole stage": {from: 2, target: 4, st: Stage{Duration: 10 * sec, Ramp: 10 * sec},
			want: StageLoad{From: 2, To: 4, Ramp: 10 * sec}, integral: 30, mean: 3},
		"ramp then hold": {from: 4, target: 0, st: Stage{Duration: 10 * sec, Ramp: 5 * sec},
			want: StageLoad{From: 4, To: 0, Ramp: 5 * sec, Hold: 5 * sec}, integral: 10, mean: 1},
		"zero rate held": {from: 7, target: 0, st: Stage{Duration: 10 * sec},
			want: StageLoad{From: 0, To: 0, Hold: 10 * sec}, integral: 0, mean: 0},
		"ramp from zero": {from: 0, target: 1000, st: Stage{Duration: 100 * sec, Ramp: 100 * sec},
			want: StageLoad{From: 0, To: 1000, Ramp: 100 * sec}, integral: 50_000, mean: 500},
		// The slope is the ramp's: 0 → 10 over 20 s reaches 5 when a 10 s stage ends.
		"ramp longer than the stage": {from: 0, target: 10, st: Stage{Duration: 10 * sec, Ramp: 20 * sec},
			want: StageLoad{From: 0, To: 5, Ramp: 10 * sec}, integral: 25, mean: 2.5},
		"no length": {from: 3, target: 5, st: Stage{Ramp: 5 * sec},
			want: StageLoad{From: 5, To: 5}, integral: 0, mean: 5},
		"negative durations": {from: 3, target: 5, st: Stage{Duration: -sec, Ramp: -sec},
			want: StageLoad{From: 5, To: 5}, integral: 0, mean: 5},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := LoadOf(tt.from, tt.target, tt.st)
			if got != tt.want {
				t.Errorf("LoadOf = %+v, want %+v", got, tt.want)
			}
			if got, want := got.Integral(), tt.integral; math.Abs(got-want) > 1e-9 {
				t.Errorf("Integral = %v, want %v", got, want)
			}
			if got, want := got.Mean(), tt.mean; math.Abs(got-want) > 1e-9 {
				t.Errorf("Mean = %v, want %v", got, want)
			}
		})
	}
}

func TestStageLoadAt(t *testing.T) {
	l := StageLoad{From: 2, To: 6, Ramp: 4 * sec, Hold: 4 * sec}
	tests := map[time.Duration]float64{-sec: 2, 0: 2, sec: 3, 2 * sec: 4, 4 * sec: 6, 7 * sec: 6, time.Hour: 6}
	for off, want := range tests {
		if got := l.At(off); got != want {
			t.Errorf("At(%v) = %v, want %v", off, got, want)
		}
	}
}

func TestScenarioStageLoadsChainStages(t *testing.T) {
	tests := map[string]struct {
		sc   Scenario
		want []StageLoad
		// arrivals is ExpectedArrivals (open model only).
		arrivals float64
	}{
		"open, rate per 100ms": {
			sc: Scenario{Executor: ExecutorRampingArrivalRate, TimeUnit: 100 * time.Millisecond, StartRate: 1, Stages: []Stage{
				{Rate: 10, Duration: sec},
				{Rate: 30, Duration: sec},
				{Rate: 0, Duration: sec, Ramp: sec},
			}},
			want: []StageLoad{
				{From: 100, To: 100, Hold: sec},
				{From: 300, To: 300, Hold: sec},
				{From: 300, To: 0, Ramp: sec},
			},
			arrivals: 100 + 300 + 150,
		},
		"open, starts ramping at StartRate": {
			sc: Scenario{Executor: ExecutorRampingArrivalRate, StartRate: 2, Stages: []Stage{
				{Rate: 4, Duration: 10 * sec, Ramp: 10 * sec},
			}},
			want:     []StageLoad{{From: 2, To: 4, Ramp: 10 * sec}},
			arrivals: 30,
		},
		// A cut ramp hands its level on: the second stage ramps from 5, not 10.
		"open, a cut ramp hands on its level": {
			sc: Scenario{Executor: ExecutorRampingArrivalRate, Stages: []Stage{
				{Rate: 10, Duration: 10 * sec, Ramp: 20 * sec},
				{Rate: 15, Duration: 10 * sec, Ramp: 10 * sec},
			}},
			want: []StageLoad{
				{From: 0, To: 5, Ramp: 10 * sec},
				{From: 5, To: 15, Ramp: 10 * sec},
			},
			arrivals: 25 + 100,
		},
		"closed, VUs from StartVUs": {
			sc: Scenario{Executor: ExecutorRampingVUs, StartVUs: 1, Stages: []Stage{
				{Target: 5, Duration: 10 * sec, Ramp: 4 * sec},
				{Target: 2, Duration: 10 * sec},
			}},
			want: []StageLoad{
				{From: 1, To: 5, Ramp: 4 * sec, Hold: 6 * sec},
				{From: 2, To: 2, Hold: 10 * sec},
			},
			arrivals: 12 + 30 + 20,
		},
		"no stages": {sc: Scenario{Executor: ExecutorConstantArrivalRate}, want: []StageLoad{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := tt.sc.StageLoads()
			if len(got) != len(tt.want) {
				t.Fatalf("StageLoads = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if !closeLoad(got[i], tt.want[i]) {
					t.Errorf("stage %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
			if got, want := tt.sc.ExpectedArrivals(), tt.arrivals; math.Abs(got-want) > 1e-6 {
				t.Errorf("ExpectedArrivals = %v, want %v", got, want)
			}
		})
	}
}

// closeLoad compares loads up to float rounding of unit conversions.
func closeLoad(a, b StageLoad) bool {
	return a.Ramp == b.Ramp && a.Hold == b.Hold && math.Abs(a.From-b.From) < 1e-9 && math.Abs(a.To-b.To) < 1e-9
}
