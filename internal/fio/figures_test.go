package fio

import (
	"slices"
	"testing"

	"dbio/internal/results"
)

// TestPointFiguresAreCatalogued writes the figures of points that have
// every figure and of points that have the fewest: each is what
// PointFigureNames lists, in its order, as the catalogue defines it.
func TestPointFiguresAreCatalogued(t *testing.T) {
	latency := results.FioLatency{N: 10, MaxUS: 900, MeanUS: 300, Percentiles: []results.FioPercentile{{P: 50, US: 250}, {P: 95, US: 600}, {P: 99, US: 800}, {P: 99.9, US: 880}}}
	dir := &results.FioDirection{IOs: 10, Bytes: 40960, BytesPerSec: 4096, IOPS: 1, Completion: latency}
	tests := []struct {
		name string
		r    results.FioPoint
		want int
	}{
		{"everything", results.FioPoint{FioPlan: results.FioPlan{RW: "randrw", RateIOPS: 100}, FioDirections: results.FioDirections{Read: dir, Write: dir, Total: dir},
			UsrCPU: 2, SysCPU: 5, ElapsedS: 30, Seconds: 30, IOPSStdev: 0.5, Steady: &results.FioSteadyState{Attained: true, WindowIOPSMean: 1}}, len(PointFigureNames())},
		{"reads without percentiles", results.FioPoint{FioPlan: results.FioPlan{RW: "randread"}, FioDirections: results.FioDirections{Read: dir,
			Total: &results.FioDirection{IOs: 10, IOPS: 1, Completion: results.FioLatency{MeanUS: 300}}}}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			figs := figures(tt.r)
			if err := results.CheckFigures(results.InStep, figs...); err != nil {
				t.Error(err)
			}
			var names []results.FigureName
			for _, f := range figs {
				names = append(names, f.Name)
			}
			listed := slices.DeleteFunc(PointFigureNames(), func(n results.FigureName) bool { return !slices.Contains(names, n) })
			if len(names) != tt.want || !slices.Equal(names, listed) {
				t.Errorf("figures %v, want %d of those listed, in their order: %v", names, tt.want, PointFigureNames())
			}
		})
	}
}
