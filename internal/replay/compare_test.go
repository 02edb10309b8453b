package replay

import (
	"bytes"
	"math"
	"testing"

	"dbio/internal/blocktrace"
)

func TestCompare(t *testing.T) {
	source := blocktrace.Signature{
		DurationSeconds: 3,
		Reads:           blocktrace.OpFigures{PerSecond: 100, Latency: blocktrace.Latency{P50: 200, P99: 900}},
		Seconds: []blocktrace.Second{
			{ReadIOPS: 100, WriteIOPS: 100}, {ReadIOPS: 50, WriteIOPS: 50}, {ReadIOPS: 100},
		},
	}
	replays := []Record{
		{Target: "/a", Pace: Recorded, Speed: 1, KeptUp: true, RuntimeSeconds: 3, ExpectedSeconds: 3,
			Seconds: []Second{{ReadIOPS: 110, WriteIOPS: 100}, {ReadIOPS: 50, WriteIOPS: 30}, {ReadIOPS: 100}}},
		{Target: "/b", Pace: Recorded, Speed: 1, BehindSeconds: 1.5, RuntimeSeconds: 4.5, ExpectedSeconds: 3},
		{Target: "/c", Pace: Max, RuntimeSeconds: 0.5, ExpectedSeconds: 3},
		{Target: "/d", Pace: Recorded, Speed: 2, KeptUp: true, RuntimeSeconds: 1.5, ExpectedSeconds: 1.5},
	}
	rows := Compare("cap", "sdb", source, replays, []string{"a", "b", "c", "d"})
	// Deviations 0.05, 0.2, 0: the median is 0.05.
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
	var md bytes.Buffer
	if err := WriteTable(&md, rows, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md", md.String())
}
