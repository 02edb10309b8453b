package analysis

import (
	"reflect"
	"testing"

	"dbio/internal/results"
)

// The caps of a run come from its record when every limited target had the
// same limit: a step served nothing against a cap cannot tell its value.
func TestRunCaps(t *testing.T) {
	san := &results.StorageLimit{LimitsConfig: results.LimitsConfig{ReadIOPS: 5000, WriteIOPS: 3000, WriteBPS: 209715200}, Mechanism: "cgroup v2"}
	other := &results.StorageLimit{LimitsConfig: results.LimitsConfig{WriteIOPS: 300}, Mechanism: "cgroup v2"}
	run := func(limits ...*results.StorageLimit) results.Run {
		var r results.Run
		for _, l := range limits {
			r.Environment.Targets = append(r.Environment.Targets, results.TargetInfo{Limit: l})
		}
		return r
	}
	for _, tt := range []struct {
		name string
		run  results.Run
		want map[results.IOCapKind]float64
	}{
		{"one limit on data and log", run(san, nil, san), map[results.IOCapKind]float64{
			results.IOCapReadIOPS: 5000, results.IOCapWriteIOPS: 3000, results.IOCapWriteBPS: 209.7152}},
		{"no limit", run(nil), nil},
		{"two limits", run(san, other), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunCaps(tt.run); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
