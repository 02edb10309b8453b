package fio

import (
	"encoding/json"
	"testing"
	"time"

	"dbio/internal/results"
)

// TestDetailIsThePointAsStored: every field of a point reaches its record
// in the results, so a fio step reads back with all fio measured.
func TestDetailIsThePointAsStored(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	dir := &Direction{IOs: 10, Bytes: 40960, BytesPerSec: 4096, IOPS: 1, RuntimeMS: 10000,
		Completion: Latency{N: 10, MinUS: 1, MaxUS: 9, MeanUS: 4, StdevUS: 2, Percentiles: []Percentile{{P: 99, US: 8}}}}
	p := PointResult{Step: 3,
		PlannedPoint: PlannedPoint{Point: Point{Name: "r", Series: "s", RW: "randrw", BlockSize: 4096, ReadPct: 70, IODepth: 8, Jobs: 2,
			RuntimeS: 10, RampS: 2, Loops: 1, Split: true, RateOf: "max", RatePct: 50, RateIOPS: 5, SteadyState: "iops:10%", SteadyWindowS: 30},
			Label: "nvme", Targets: []string{"/a", "/b"}},
		Profile: "mix", Engine: "io_uring", Direct: true, Status: results.StatusCompleted, Error: "e", Started: start, Ended: start.Add(time.Minute),
		Read: dir, Write: dir, Total: dir, UsrCPU: 1, SysCPU: 2, ElapsedS: 12,
		Steady:  &SteadyState{Criterion: "iops:10%", WindowS: 30, Attained: true, Value: "1%", WindowIOPSMean: 1, WindowMBPerSec: 2, WindowIOPS: []int64{1}, WindowBytesRate: []int64{2}},
		Seconds: 10, SecondsDropped: 1, FioNotes: []string{"n"}, JobFile: JobFileName, Output: OutputFileName}
	d, err := p.Detail()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(p)
	got, _ := json.Marshal(d)
	if string(got) != string(want) {
		t.Errorf("the record lacks part of the point:\nrecord %s\npoint  %s", got, want)
	}
}
