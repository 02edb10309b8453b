package fio

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRecordedPlanKeepsEveryField: every field of a planned point reaches
// its record in the results, so a fio step reads back with all it asked of fio.
func TestRecordedPlanKeepsEveryField(t *testing.T) {
	pt := PlannedPoint{Point: Point{Name: "r", Series: "s", RW: "randrw", BlockSize: 4096, ReadPct: 70, IODepth: 8, Jobs: 2,
		RuntimeS: 10, RampS: 2, Loops: 1, Split: true, RateOf: "max", RatePct: 50, RateIOPS: 5, SteadyState: "iops:10%", SteadyWindowS: 30},
		Label: "nvme", Targets: []string{"/a", "/b"}}
	// The point must set every field, or a field the copy forgets would go unseen.
	for _, v := range []reflect.Value{reflect.ValueOf(pt.Point), reflect.ValueOf(pt)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("the test point leaves %s.%s unset", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	want, _ := json.Marshal(pt)
	got, _ := json.Marshal(recordedPlan(pt))
	if string(got) != string(want) {
		t.Errorf("the record lacks part of the point:\nrecord %s\npoint  %s", got, want)
	}
}
