package analysis

import (
	"math"
	"testing"

	"dbio/internal/results"
)

// blockRun is a capture or a replay with its seconds' reads and writes.
func blockRun(kind string, b results.BlockIO, seconds ...[2]float64) *Recorded {
	l := &results.Loaded{Steps: []results.Step{{Name: kind, Kind: kind, Status: results.StatusCompleted, BlockIO: &b}}}
	l.Series = results.Series{Columns: []string{"read_iops", "write_iops"}, Every: 1}
	for _, s := range seconds {
		l.Series.Rows = append(l.Series.Rows, results.LoadedRow{Step: kind, Values: []float64{s[0], s[1]}})
	}
	return NewRecorded(l)
}

func TestBlockIORows(t *testing.T) {
	runs := []*Recorded{
		blockRun(results.KindCapture, results.BlockIO{SourceS: 3, RuntimeS: 3}, [2]float64{}, [2]float64{100, 100}, [2]float64{50, 50}, [2]float64{100, 0}),
		blockRun(results.KindReplay, results.BlockIO{Pace: "recorded", Speed: 1, KeptUp: true, RuntimeS: 3, SourceS: 3},
			[2]float64{110, 100}, [2]float64{50, 30}, [2]float64{100, 0}),
		blockRun(results.KindReplay, results.BlockIO{Pace: "recorded", Speed: 1, BehindS: 1.5, RuntimeS: 4.5, SourceS: 3}),
		blockRun(results.KindReplay, results.BlockIO{Pace: "max", RuntimeS: 0.5, SourceS: 3}),
		blockRun(results.KindReplay, results.BlockIO{Pace: "recorded", Speed: 2, KeptUp: true, RuntimeS: 1.5, SourceS: 1.5}, [2]float64{200, 200}),
	}
	rows := BlockIORows(runs)
	// Deviations 0.05, 0.2, 0 from the source's first busy second: the median is 0.05.
	if d := rows[1].IOPSDeviation; math.Abs(d-0.05) > 1e-9 {
		t.Errorf("IOPS deviation %v, want 0.05", d)
	}
	for i, want := range []string{"source", "kept up", "fell behind by 1.50 s (50 %)", "6.00× the source's pace", "kept up"} {
		if rows[i].Verdict != want {
			t.Errorf("row %d verdict %q, want %q", i, rows[i].Verdict, want)
		}
	}
	if !math.IsNaN(rows[3].IOPSDeviation) || !math.IsNaN(rows[4].IOPSDeviation) || rows[4].Pace != "recorded ×2" {
		t.Errorf("a replay not at the recorded pace was compared second by second: %+v", rows[3:])
	}
	if h := Headlines(runs[0]); len(h) != 1 || h[0].Point != "source" {
		t.Errorf("a capture's headline %+v", h)
	}
}
