package merge

import (
	"reflect"
	"testing"

	"github.com/llmload/llmload/engine"
)

func TestWorstServer(t *testing.T) {
	a := &engine.ServerCPU{CPUPercent: 90, MachinePercent: 60, OwnPercent: 5, ServerPercent: 45, OtherPercent: 10, Reasons: []string{"segment 0/2: waited"}}
	b := &engine.ServerCPU{CPUPercent: 120, MachinePercent: 70, OwnPercent: 4, ServerPercent: 60, OtherPercent: 6, Disagrees: true, Reasons: []string{"waited"}}
	tests := []struct {
		name string
		a, b *engine.ServerCPU
		want *engine.ServerCPU
	}{
		{"no local server anywhere", nil, nil, nil},
		{"only the first segment's", a, nil, a},
		{"only the second segment's", nil, b, &engine.ServerCPU{CPUPercent: 120, MachinePercent: 70, OwnPercent: 4, ServerPercent: 60, OtherPercent: 6,
			Disagrees: true, Reasons: []string{"segment 1/2: waited"}}},
		{"both: each figure's highest", a, b, &engine.ServerCPU{CPUPercent: 120, MachinePercent: 70, OwnPercent: 5, ServerPercent: 60, OtherPercent: 10,
			Disagrees: true, Reasons: []string{"segment 0/2: waited", "segment 1/2: waited"}}},
	}
	for _, tt := range tests {
		if got := worstServer(tt.a, tt.b, "segment 1/2"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if len(a.Reasons) != 1 {
		t.Errorf("the first segment's reasons changed: %q", a.Reasons)
	}
}
