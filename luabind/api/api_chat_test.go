package api

import (
	"reflect"
	"testing"
)

func TestMergeTags(t *testing.T) {
	tests := []struct {
		base, over, want map[string]string
	}{
		{nil, nil, nil},
		{map[string]string{"a": "1"}, nil, map[string]string{"a": "1"}},
		{nil, map[string]string{"b": "2"}, map[string]string{"b": "2"}},
		{map[string]string{"a": "1", "b": "1"}, map[string]string{"b": "2"}, map[string]string{"a": "1", "b": "2"}},
	}
	for _, tt := range tests {
		if got := mergeTags(tt.base, tt.over); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("mergeTags(%v, %v) = %v, want %v", tt.base, tt.over, got, tt.want)
		}
	}
}
